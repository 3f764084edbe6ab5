package jetty

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/spin"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// JFCE is a completion event channel (urma_jfce_t): JFCs created with it
// report events there, and Wait sleeps until one does.
type JFCE struct {
	p       provider.JFCE
	mu      sync.Mutex
	scratch []any
	jfcs    int
	waiting waiting
	closer  closer
}

// NewJFCE creates a completion event channel.
func NewJFCE(uctx *urma.Context) (*JFCE, error) {
	if uctx == nil {
		return nil, opErr("create jfce", provider.Errorf(urma.ErrInvalid, "nil context"))
	}
	p, err := uctx.Raw().NewJFCE()
	if err != nil {
		return nil, opErr("create jfce", err)
	}
	// The waiters' bookkeeping is made here, not at the first wait, which
	// may be in a timed loop.
	return &JFCE{p: p, scratch: make([]any, 8), waiting: waiting{waiters: map[*JFC]int{}}}, nil
}

// Wait blocks until at least one JFC of the channel has an event, fills
// out with the JFCs that had events and returns how many (urma_wait_jfce).
// Each entry is one event, to be acknowledged with JFC.Ack(1) (or Ack(k)
// for k entries of one JFC) before that JFC can be closed; a JFC appears
// more than once only when it had several events. The events of a JFC
// that a goroutine waits for in JFC.Wait or PollWait go to that goroutine,
// not to Wait.
//
// Events already there are returned even when ctx is done, so a done ctx
// makes Wait a check. Once ctx is done with no event, Wait returns within
// a millisecond with an error that matches context.DeadlineExceeded and
// urma.ErrTimeout for a deadline, context.Canceled for a cancel. A Close of
// the channel during the wait ends it with an error that matches
// urma.ErrClosed and net.ErrClosed.
//
// Any number of goroutines may wait on one JFCE, in Wait, JFC.Wait and
// PollWait alike: one of them sleeps in the provider and hands the others
// their events.
//
// On loopback, the sleeper sleeps in a system call on its thread, as a C
// program's would. With GOMAXPROCS 1 (a process bound to one core with
// taskset, for one) the runtime hands that thread's P to another thread
// while it sleeps, which costs two more context switches per wake: bind
// the waiting goroutine's locked thread instead (runtime.LockOSThread and
// sched_setaffinity, as urmactl perf -c does).
func (e *JFCE) Wait(ctx context.Context, out []*JFC) (int, error) {
	if len(out) == 0 {
		return 0, opErr("jfce wait", provider.Errorf(urma.ErrInvalid, "empty output slice"))
	}
	n, err := e.await(ctx, nil, out)
	if err != nil {
		return n, opErr("jfce wait", err)
	}
	return n, nil
}

// Raw returns the provider's JFCE.
func (e *JFCE) Raw() provider.JFCE { return e.p }

// Close deletes the channel. Idempotent and nil-safe.
func (e *JFCE) Close() error {
	if e == nil {
		return nil
	}
	return e.closer.close("delete jfce", e.p.Close)
}

// JFCConfig configures a JFC. Depth zero means 1024. JFCE nil means polling
// mode only. The moderation settings are accepted by every provider and
// honoured by those that can.
type JFCConfig struct {
	Depth            int
	JFCE             *JFCE
	ModerationCount  int
	ModerationPeriod time.Duration
	// LockFree promises that one goroutine at a time polls the JFC (Poll,
	// PollWait, PostAfter; urma_jfc_flag_t.lock_free), as a loop that owns
	// it does: the provider may then take records without the atomic
	// read-modify-writes that concurrent pollers need (on loopback, two a
	// poll: the claim of the records and the credit of their queues). Two
	// goroutines polling a lock-free JFC at once may both take a record,
	// and leave its queue short of room it has. Producers are not bound
	// by it: any number of queues, goroutines and processes may complete
	// into the JFC. Providers without such locking ignore it.
	LockFree bool
	// AllowOverrun lets the queues that complete into the JFC hold more
	// requests and receives than it has records (the sum of their
	// depths above Depth): NewJFS, NewJFR and NewJetty refuse such a
	// queue otherwise. Records that find the JFC full are lost, and a
	// JFC_ERR async event reports it.
	AllowOverrun bool
}

// DefaultJFCDepth is the depth of a JFC whose config leaves it zero.
const DefaultJFCDepth = 1024

// JFC is a completion queue (urma_jfc_t).
type JFC struct {
	p      provider.JFC
	jfce   *JFCE
	closer closer
	views  viewOps
	// pace is PollWait's: one across calls, so that a loop of short
	// waits yields too.
	pace spin.Pacer
	// parks counts PollWait's sleeps, for its tests.
	parks atomic.Int64
	room  jfcRoom
}

// NewJFC creates a completion queue. Give it a depth at least the sum of the
// depths of the queues that complete into it, or records can be lost (a
// JFC_ERR async event reports that).
func NewJFC(uctx *urma.Context, cfg JFCConfig) (*JFC, error) {
	if uctx == nil {
		return nil, opErr("create jfc", provider.Errorf(urma.ErrInvalid, "nil context"))
	}
	if cfg.Depth < 0 {
		return nil, opErr("create jfc", provider.Errorf(urma.ErrInvalid, "negative depth %d", cfg.Depth))
	}
	if cfg.Depth == 0 {
		cfg.Depth = DefaultJFCDepth
	}
	j := &JFC{jfce: cfg.JFCE}
	j.room.overrun = cfg.AllowOverrun
	pc := provider.JFCConfig{Depth: cfg.Depth, ModerationCount: cfg.ModerationCount,
		ModerationPeriod: cfg.ModerationPeriod, LockFree: cfg.LockFree, Owner: j}
	if cfg.JFCE != nil {
		pc.JFCE = cfg.JFCE.p
	}
	p, err := uctx.Raw().NewJFC(pc)
	if err != nil {
		return nil, opErr("create jfc", err)
	}
	j.p = p
	if cfg.JFCE != nil {
		cfg.JFCE.mu.Lock()
		cfg.JFCE.jfcs++
		cfg.JFCE.mu.Unlock()
	}
	return j, nil
}

// Poll moves up to len(crs) completion records into crs and returns how
// many (urma_poll_jfc). It never blocks and does not allocate.
func (j *JFC) Poll(crs []CR) (int, error) {
	raw := rawCRs(crs)
	n, err := j.p.Poll(raw)
	n = j.views.finish(raw[:n])
	if err != nil {
		return n, opErr("poll jfc", err)
	}
	return n, nil
}

// pollOnce is Poll; with a, until a's request is posted, the provider's
// poll posts it once it finds completions.
func (j *JFC) pollOnce(crs []CR, a *postAfter) (int, error) {
	if a == nil || a.posted {
		return j.Poll(crs)
	}
	raw := rawCRs(crs)
	n, posted, postErr, err := a.pp.PollPost(j.p, raw)
	n = j.views.finish(raw[:n])
	a.posted, a.err = posted, postErr
	if err != nil {
		return n, opErr("poll jfc", err)
	}
	return n, nil
}

// Rearm asks for one event on the JFCE for the next record, or with
// solicitedOnly for the next solicited or failed one (urma_rearm_jfc). It
// fails with urma.ErrAgain while unread records remain: poll them first.
func (j *JFC) Rearm(solicitedOnly bool) error {
	if err := j.p.Rearm(solicitedOnly); err != nil {
		// Records that arrived before the arm: PollWait relies on
		// telling this apart from a failure. Providers return the
		// sentinel itself.
		if err == provider.ErrUnreadRecords {
			return errRearmUnread
		}
		return opErr("rearm jfc", err)
	}
	return nil
}

// errRearmUnread is Rearm's error for unread records, made once.
var errRearmUnread = opErr("rearm jfc", provider.ErrUnreadRecords)

// Wait waits for an event of this JFC on its JFCE and acknowledges it
// (urma_wait_jfce and urma_ack_jfc for one JFC): arm the JFC with Rearm
// first, then poll its records once Wait returns. Other JFCs may share the
// JFCE, with waiters of their own. It returns as JFCE.Wait does once ctx
// is done or the JFCE is closed.
func (j *JFC) Wait(ctx context.Context) error {
	if j.jfce == nil {
		return opErr("wait jfc", provider.Errorf(urma.ErrInvalid, "jfc has no jfce (polling mode)"))
	}
	if _, err := j.jfce.await(ctx, j, nil); err != nil {
		return opErr("wait jfc", err)
	}
	return j.Ack(1)
}

// Ack acknowledges n events JFCE.Wait returned for this JFC (urma_ack_jfc).
func (j *JFC) Ack(n int) error {
	if err := j.p.Ack(n); err != nil {
		return opErr("ack jfc", err)
	}
	return nil
}

// Modify changes the moderation settings (urma_modify_jfc).
func (j *JFC) Modify(count int, period time.Duration) error {
	if err := j.p.Modify(count, period); err != nil {
		return opErr("modify jfc", err)
	}
	return nil
}

// Depth is the queue's depth.
func (j *JFC) Depth() int { return j.p.Depth() }

// Raw returns the provider's JFC.
func (j *JFC) Raw() provider.JFC { return j.p }

// Close deletes the JFC. It fails with urma.ErrBusy while queues use it or
// events are unacknowledged. Idempotent and nil-safe.
func (j *JFC) Close() error {
	if j == nil {
		return nil
	}
	return j.closer.close("delete jfc", func() error {
		if j.jfce != nil {
			if err := j.jfce.dropHeld(j); err != nil {
				return err
			}
		}
		if err := j.p.Close(); err != nil {
			return err
		}
		if j.jfce != nil {
			j.jfce.mu.Lock()
			j.jfce.jfcs--
			j.jfce.mu.Unlock()
		}
		return nil
	})
}
