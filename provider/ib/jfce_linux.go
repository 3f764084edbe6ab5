//go:build cgo && urma_verbs

package ib

import (
	"context"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
	"github.com/urma-go/sdk/provider/internal/ctxwake"
	"github.com/urma-go/sdk/provider/internal/rules"
)

// jfce is a completion channel plus an eventfd: the channel carries the
// device's CQ events, the eventfd the provider's own (software records).
// Wait sleeps in poll(2) on both.
type jfce struct {
	ctx    *ibContext
	ch     *verbs.CompChannel
	efd    int
	closed atomic.Bool

	mu   sync.Mutex
	jfcs map[uint64]*jfc
	soft []*jfc
	wmu  sync.Mutex // one Wait at a time reads the channel
	// watch wakes a Wait when its ctx ends.
	watch ctxwake.Watch
}

func (c *ibContext) NewJFCE() (provider.JFCE, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	ch, err := c.vc.NewCompChannel()
	if err != nil {
		return nil, verbsErr("ibv_create_comp_channel", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		_ = ch.Destroy()
		return nil, rules.Resource("eventfd", err)
	}
	e := &jfce{ctx: c, ch: ch, efd: efd, jfcs: map[uint64]*jfc{}}
	e.watch.Wake = e.wake
	c.track(e)
	return e, nil
}

func (e *jfce) rank() int { return 3 }

func (e *jfce) add(j *jfc) {
	e.mu.Lock()
	e.jfcs[j.val] = j
	e.mu.Unlock()
}

func (e *jfce) remove(j *jfc) {
	e.mu.Lock()
	delete(e.jfcs, j.val)
	kept := e.soft[:0]
	for _, s := range e.soft {
		if s != j {
			kept = append(kept, s)
		}
	}
	e.soft = kept
	e.mu.Unlock()
}

func (e *jfce) softNotify(j *jfc) {
	e.mu.Lock()
	e.soft = append(e.soft, j)
	e.mu.Unlock()
	var one = [8]byte{1}
	_, _ = unix.Write(e.efd, one[:])
}

func (e *jfce) Wait(ctx context.Context, out []any) (int, error) {
	if e.closed.Load() {
		return 0, errClosed("jfce")
	}
	if len(out) == 0 {
		return 0, provider.Errorf(provider.ErrInvalid, "empty output slice")
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	watched := false
	for {
		n, err := e.take(out)
		if n > 0 || err != nil {
			return n, err
		}
		if err := provider.ContextErr(ctx); err != nil {
			return 0, err
		}
		if !watched {
			// A done ctx wakes the poll through the eventfd, as a
			// software event does; the loop then returns its error.
			e.watch.On(ctx)
			watched = true
		}
		fds := []unix.PollFd{{Fd: int32(e.ch.FD()), Events: unix.POLLIN}, {Fd: int32(e.efd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return 0, provider.Errorf(provider.ErrFail, "poll: %v", err)
		}
		if e.closed.Load() {
			return 0, errClosed("jfce")
		}
	}
}

// wake makes a Wait in poll look again, unless the JFCE is closed (its
// eventfd may be gone, and its number reused).
func (e *jfce) wake() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed.Load() {
		var one = [8]byte{1}
		_, _ = unix.Write(e.efd, one[:])
	}
}

// take moves pending events into out: software ones, then the channel's.
func (e *jfce) take(out []any) (int, error) {
	n := 0
	var buf [8]byte
	_, _ = unix.Read(e.efd, buf[:])
	e.mu.Lock()
	for n < len(out) && len(e.soft) > 0 {
		j := e.soft[0]
		e.soft = e.soft[1:]
		j.swEvents.Add(1)
		out[n] = j.src.Owner
		n++
	}
	if len(e.soft) > 0 {
		var one = [8]byte{1}
		_, _ = unix.Write(e.efd, one[:])
	}
	e.mu.Unlock()
	for n < len(out) {
		v, ok, err := e.ch.GetEvent()
		if err != nil {
			return n, verbsErr("read completion event", err)
		}
		if !ok {
			break
		}
		e.mu.Lock()
		j := e.jfcs[uint64(v)]
		e.mu.Unlock()
		if j == nil {
			continue
		}
		j.armed.Store(0)
		j.hwEvents.Add(1)
		out[n] = j.src.Owner
		n++
	}
	return n, nil
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
	return e.forceClose()
}

func (e *jfce) forceClose() error {
	if e.closed.Swap(true) {
		return nil
	}
	e.watch.Stop()
	var one = [8]byte{1}
	_, _ = unix.Write(e.efd, one[:]) // wake a Wait
	e.wmu.Lock()
	defer e.wmu.Unlock()
	e.ctx.untrack(e)
	e.mu.Lock() // a wake in progress writes the eventfd first
	_ = unix.Close(e.efd)
	e.mu.Unlock()
	if err := e.ch.Destroy(); err != nil {
		return verbsErr("destroy completion channel", err)
	}
	return nil
}
