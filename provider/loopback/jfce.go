package loopback

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/ctxwake"
	"github.com/urma-go/sdk/provider/internal/objtab"
	"github.com/urma-go/sdk/provider/internal/rules"
)

// jfce is a completion event channel: an eventfd that producers of records
// in any process write when they disarm a JFC of the channel, and the JFCs
// whose notified flag Wait collects.
type jfce struct {
	ctx *lbContext
	// efd is a plain descriptor, never handed to the runtime's poller (an
	// os.File would be): the poller's epoll set would hold it too, and
	// every event would then wake that poller's thread as well as the
	// sleeper, a second thread woken across processes per message.
	efd    int
	mu     sync.Mutex
	jfcs   []*jfc
	closed atomic.Bool
	// scratch is what a sleeping Wait gives ppoll and read: only the
	// kernel writes it, and nobody reads what it writes.
	scratch struct {
		fds [1]unix.PollFd
		buf [8]byte
	}
	// sleeping is held (read) by Waits in ppoll on efd and (write) by
	// destroy, so the descriptor is not closed, and its number reused,
	// under a sleeper.
	sleeping sync.RWMutex
	// watch wakes a sleeper when its ctx ends.
	watch ctxwake.Watch
}

// sleepSlice bounds one ppoll. Close and a done ctx wake a sleeper at once
// (they write the eventfd); the bound only limits what a lost wake-up
// could cost.
const sleepSlice = 50 * time.Millisecond

func (c *lbContext) NewJFCE() (provider.JFCE, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, rules.Resource("eventfd", err)
	}
	e := &jfce{ctx: c, efd: efd}
	e.watch.Wake = e.wake
	if _, err := c.adopt(e); err != nil {
		unix.Close(efd)
		return nil, err
	}
	return e, nil
}

// signalEventfd wakes a JFCE. The counter cannot overflow in practice, and a
// wake-up that is lost because the fd is gone has nobody left to wake.
func signalEventfd(fd int) {
	_, _ = unix.Write(fd, eventfdOne[:])
}

// eventfdOne is the value signalEventfd writes. It lives outside the call,
// as does each JFCE's read buffer: a buffer handed to a system call
// escapes to the heap under the race detector, and these run once per
// event.
var eventfdOne = func() (b [8]byte) {
	binary.NativeEndian.PutUint64(b[:], 1)
	return b
}()

func (e *jfce) add(j *jfc) {
	e.mu.Lock()
	e.jfcs = append(e.jfcs, j)
	e.mu.Unlock()
}

func (e *jfce) drop(j *jfc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, x := range e.jfcs {
		if x == j {
			e.jfcs = append(e.jfcs[:i], e.jfcs[i+1:]...)
			return
		}
	}
}

// take moves the JFCs with a signalled event into out.
func (e *jfce) take(out []any) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, j := range e.jfcs {
		if n == len(out) {
			break
		}
		if j.view.ring.Meta(metaNotified).CompareAndSwap(1, 0) {
			j.events.Add(1)
			out[n] = j.src.Owner
			n++
		}
	}
	return n
}

func (e *jfce) Wait(ctx context.Context, out []any) (int, error) {
	if e.closed.Load() {
		return 0, errClosed("jfce")
	}
	if len(out) == 0 {
		return 0, provider.Errorf(provider.ErrInvalid, "empty output")
	}
	watched := false
	for {
		if n := e.take(out); n > 0 {
			return n, nil
		}
		if err := provider.ContextErr(ctx); err != nil {
			return 0, err
		}
		if !watched {
			e.watch.On(ctx)
			watched = true
		}
		// A blocking ppoll rather than the runtime's poller: the waking
		// write then resumes this thread directly, instead of going through
		// the poller and the scheduler, which add much to a raw eventfd
		// round trip across cores (bench/event-wake compares the two).
		if !e.sleep(sleepSlice) {
			return 0, errClosed("jfce")
		}
	}
}

// wake makes a sleeping Wait look again, unless the JFCE is closed (its
// eventfd may be gone, and its number reused).
func (e *jfce) wake() {
	e.sleeping.RLock()
	defer e.sleeping.RUnlock()
	if !e.closed.Load() {
		signalEventfd(e.efd)
	}
}

// sleep waits up to d for the eventfd and consumes its counter; the flags
// say which JFCs fired, so a wake-up whose flag an earlier take already
// collected is harmless. It reports false once the JFCE is closed.
func (e *jfce) sleep(d time.Duration) bool {
	e.sleeping.RLock()
	defer e.sleeping.RUnlock()
	if e.closed.Load() {
		return false
	}
	fds := e.scratch.fds[:]
	fds[0] = unix.PollFd{Fd: int32(e.efd), Events: unix.POLLIN}
	ts := unix.NsecToTimespec(int64(d))
	if n, err := unix.Ppoll(fds, &ts, nil); err == nil && n > 0 {
		_, _ = unix.Read(e.efd, e.scratch.buf[:])
	}
	return true
}

func (e *jfce) Close() error {
	e.ctx.closeMu.RLock()
	defer e.ctx.closeMu.RUnlock()
	if e.closed.Load() {
		return errClosed("jfce")
	}
	e.mu.Lock()
	n := len(e.jfcs)
	e.mu.Unlock()
	if n > 0 {
		return provider.Errorf(provider.ErrBusy, "jfce is used by %d jfcs", n)
	}
	e.ctx.disown(e)
	e.destroy()
	return nil
}

func (e *jfce) rank() int { return objtab.RankJFCE }

func (e *jfce) destroy() {
	if e.closed.Swap(true) {
		return
	}
	// Wake a sleeper, then wait for it to leave before closing.
	e.watch.Stop()
	signalEventfd(e.efd)
	e.sleeping.Lock()
	unix.Close(e.efd)
	e.sleeping.Unlock()
}
