package loopback

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/provider"
)

// What one peer may cost a context. Each bound keeps a process of this
// user that speaks the control protocol badly, or on purpose, from making
// the owner wait or allocate without limit.
const (
	// defaultMaxPeers is how many control connections a context serves
	// at once unless EnvMaxPeers says otherwise: one per importing
	// context is the rule.
	defaultMaxPeers = 1024
	// partialTimeout bounds how long a message that has begun may take to
	// arrive whole; an idle connection waits for its next message
	// without limit.
	partialTimeout = 2 * time.Second
	// byeTimeout bounds the goodbye a closing context writes to each of
	// its importers, together: one that does not read gets none.
	byeTimeout = 100 * time.Millisecond
	// acceptBackoffMin and acceptBackoffMax bound the pause after an
	// accept fails for want of descriptors or memory.
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
	// Refused requests (a wrong token, a buffer the peer may not reach)
	// are answered at once up to a burst, then one per interval: per
	// connection, and for the context's connections together.
	connFailBurst    = 8
	connFailEvery    = 100 * time.Millisecond
	contextFailBurst = 64
	contextFailEvery = 10 * time.Millisecond
)

// EnvMaxPeers names the environment variable that sets how many control
// connections (importing contexts of other processes, and inspections) a
// loopback context serves at once; more are refused and logged.
const EnvMaxPeers = "URMA_LOOPBACK_MAX_PEERS"

// maxPeers reads EnvMaxPeers: defaultMaxPeers when unset, an error when
// it is not a positive number.
func maxPeers() (int, error) {
	v := os.Getenv(EnvMaxPeers)
	if v == "" {
		return defaultMaxPeers, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, provider.Errorf(provider.ErrInvalid, "%s=%q: want a positive number of connections", EnvMaxPeers, v)
	}
	return n, nil
}

// failLimiter spaces out refusals: burst of them at once, then one per
// every. take returns how long the next one must wait.
type failLimiter struct {
	burst int
	every time.Duration
	mu    sync.Mutex
	tat   time.Time // when the burst is whole again
}

func (l *failLimiter) take() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.tat = later(l.tat, now).Add(l.every)
	return max(l.tat.Sub(now)-time.Duration(l.burst)*l.every, 0)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// logLimiter lets one log line through per second.
type logLimiter struct{ last atomic.Int64 }

func (l *logLimiter) allow() bool {
	now := time.Now().UnixNano()
	last := l.last.Load()
	return now-last >= int64(time.Second) && l.last.CompareAndSwap(last, now)
}
