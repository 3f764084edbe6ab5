//go:build cgo && urma_verbs

package ib

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
)

// Plain rdma_cm connections: the peer is a verbs program, so there is no
// private data, no token and no descriptor. The peer stands as a remote
// marked foreign, whose JettyID is its address and port; its connection
// is never remade (the peer would not know what to do with our request).

// maxDepth asks rdma_cm for the most READs and atomics the device allows
// each way, clamped to what the peer's request or reply offers
// (RDMA_MAX_INIT_DEPTH and RDMA_MAX_RESP_RES).
const maxDepth = 0xff

// peerID names a plain rdma_cm peer by address and port.
func peerID(a netip.AddrPort) provider.JettyID {
	return provider.JettyID{EID: provider.EIDFromAddr(a.Addr()), UASID: uint32(a.Port())}
}

// newForeign is the remote a plain rdma_cm connection is bound to.
func (c *ibContext) newForeign(a netip.AddrPort) *remote {
	r := &remote{ctx: c, foreign: true, done: make(chan struct{}), desc: provider.JettyDesc{ID: peerID(a), Kind: provider.KindJetty, Mode: provider.RC}}
	c.track(r)
	return r
}

// rawJetty checks that p is an unbound, unconnected RC Jetty of c.
func (c *ibContext) rawJetty(p provider.Jetty) (*jetty, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	j, ok := p.(*jetty)
	if !ok || j == nil || j.ctx != c {
		return nil, provider.Errorf(provider.ErrInvalid, "jetty of another context or provider")
	}
	if j.closed.Load() {
		return nil, errClosed("jetty")
	}
	if j.sq.mode != provider.RC {
		return nil, provider.Errorf(provider.ErrInvalid, "rdma_cm peers need an RC jetty, this one is %v", j.sq.mode)
	}
	return j, j.free()
}

// free checks that j is neither bound nor connected. Callers check again
// under sq.mu, which Bind holds too, before they connect j.
func (j *jetty) free() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed.Load() {
		return errClosed("jetty")
	}
	if j.bound != nil || j.cn != nil && !j.cn.dead.Load() {
		return provider.Errorf(provider.ErrExist, "jetty %d is bound or connected", j.id)
	}
	return nil
}

// DialRDMACM implements provider.RDMACM.
func (c *ibContext) DialRDMACM(ctx context.Context, p provider.Jetty, addr netip.AddrPort) (provider.CMPeer, error) {
	j, err := c.rawJetty(p)
	if err != nil {
		return nil, err
	}
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	if !addr.IsValid() || addr.Port() == 0 {
		return nil, provider.Errorf(provider.ErrInvalid, "rdma_cm address %v needs a host and a port", addr)
	}
	j.sq.mu.Lock()
	defer j.sq.mu.Unlock()
	if err := j.free(); err != nil {
		return nil, err
	}
	d, rejected, err := c.connectCM(ctx, addr, nil, int(j.sq.rnrRetry), maxDepth, j.makeQP)
	if err != nil {
		return nil, err
	}
	if rejected != nil {
		return nil, provider.Errorf(provider.ErrNotFound, "%v refused the connection (%s, status %d): is a server listening there?",
			addr, verbs.CMEventName(rejected.Type), rejected.Status)
	}
	r := c.newForeign(addr)
	j.mu.Lock()
	j.bound = r
	j.mu.Unlock()
	j.adopt(&conn{id: d.id, qp: d.qp, ended: r.end}, r.desc.ID)
	return r, nil
}

// SegmentKey implements provider.RDMACM.
func (c *ibContext) SegmentKey(p provider.Segment) (uint64, uint32, error) {
	s, err := c.localSeg(p)
	if err != nil {
		return 0, 0, err
	}
	if s.desc.Access == provider.AccessLocalOnly {
		return 0, 0, provider.Errorf(provider.ErrPermission, "segment allows no remote access, so it has no rkey")
	}
	return s.desc.VA, s.mr.RKey, nil
}

// ImportKey implements provider.RDMACM.
func (c *ibContext) ImportKey(p provider.Remote, va, length uint64, rkey uint32) (provider.Target, error) {
	r, err := c.ownRemote(p)
	if err != nil {
		return nil, err
	}
	if length == 0 || va+length < va {
		return nil, provider.Errorf(provider.ErrInvalid, "range of %d bytes at %#x", length, va)
	}
	t := &target{ctx: c, rkey: rkey, desc: provider.SegmentDesc{EID: r.desc.ID.EID, UASID: r.desc.ID.UASID,
		VA: va, Len: length, Access: provider.AccessRead | provider.AccessWrite}}
	c.track(t)
	return t, nil
}

// cmListener is a plain rdma_cm listener with its own event channel, so
// that its requests do not reach the context's URMA listener.
type cmListener struct {
	c      *ibContext
	ch     *verbs.EventChannel
	w      *verbs.Waiter
	id     verbs.CMID
	addr   netip.AddrPort
	closed chan struct{}

	// mu makes Accepts take turns; backlog holds requests read while an
	// Accept waited for its connection to be established.
	mu      sync.Mutex
	backlog []verbs.CMID
	once    sync.Once
}

// ListenRDMACM implements provider.RDMACM. An unspecified address listens
// on the context's EID.
func (c *ibContext) ListenRDMACM(addr netip.AddrPort) (provider.CMListener, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	a := addr.Addr().Unmap()
	if !a.IsValid() || a.IsUnspecified() {
		a = c.eid.addr
	}
	_, scope := c.sourceFor(a)
	ch, w, id, err := cmListen(a, addr.Port(), scope, 16, "rdma_cm listener")
	if err != nil {
		return nil, err
	}
	l := &cmListener{c: c, ch: ch, w: w, id: id, closed: make(chan struct{})}
	l.addr = netip.AddrPortFrom(a, l.id.SrcPort())
	c.track(l)
	return l, nil
}

// Addr implements provider.CMListener.
func (l *cmListener) Addr() netip.AddrPort { return l.addr }
func (l *cmListener) rank() int            { return 0 }
func (l *cmListener) forceClose() error    { return l.Close() }

// Close stops listening and refuses the requests nobody accepted.
func (l *cmListener) Close() error {
	first := false
	l.once.Do(func() {
		first = true
		close(l.closed)
		_ = l.w.Close() // wakes an Accept, which gives mu up
		l.mu.Lock()
		for _, id := range l.backlog {
			_ = id.Reject(nil)
			_ = id.Destroy()
		}
		l.backlog = nil
		l.mu.Unlock()
		_ = l.id.Destroy()
		l.ch.Destroy()
		l.c.untrack(l)
	})
	if !first {
		return errClosed("rdma_cm listener")
	}
	return nil
}

// Accept implements provider.CMListener.
func (l *cmListener) Accept(ctx context.Context, p provider.Jetty) (provider.CMPeer, error) {
	j, err := l.c.rawJetty(p)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.closed:
		return nil, errClosed("rdma_cm listener")
	default:
	}
	for {
		id, err := l.next(ctx)
		if err != nil {
			return nil, err
		}
		r, err := l.accept(ctx, j, id)
		var pf peerFailed
		if err == nil || !errors.As(err, &pf) || ctx.Err() != nil {
			return r, err
		}
		// The request failed on its own (the peer gave up, or it came
		// through another device): wait for the next.
		provider.Logf(provider.LogInfo, "ib %v: rdma_cm connection at %v not accepted: %v", l.c, l.addr, err)
	}
}

// next returns a pending connection request, waiting for one.
func (l *cmListener) next(ctx context.Context) (verbs.CMID, error) {
	if len(l.backlog) > 0 {
		id := l.backlog[0]
		l.backlog = l.backlog[1:]
		return id, nil
	}
	for {
		ev, err := l.event(ctx)
		if err != nil {
			return verbs.CMID{}, err
		}
		if ev.Type == verbs.CMConnectRequest {
			return ev.ID, nil
		}
	}
}

// event waits for the next event on the listener's channel; Close and ctx
// end the wait. The waiter is woken by Close only, so a wait looks at ctx
// every tick.
func (l *cmListener) event(ctx context.Context) (verbs.CMEvent, error) {
	const tick = 100 * time.Millisecond
	var ev verbs.CMEvent
	var gerr error
	try := func() bool {
		e, ok, err := l.ch.GetEvent()
		if err != nil {
			gerr = err
			return true
		}
		ev = e
		return ok
	}
	for {
		if err := ctx.Err(); err != nil {
			return ev, context.Cause(ctx)
		}
		deadline := time.Now().Add(tick)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		err := l.w.Wait(deadline, try)
		switch {
		case err == verbs.ErrTimeout:
			continue
		case err != nil:
			return ev, errClosed("rdma_cm listener")
		case gerr != nil:
			return ev, verbsErr("rdma_cm event", gerr)
		}
		return ev, nil
	}
}

// peerFailed is an accept that failed because of the request or the peer,
// not of the Jetty: Accept waits for the next request.
type peerFailed struct{ error }

// Unwrap gives errors.Is the failure underneath.
func (e peerFailed) Unwrap() error { return e.error }

// accept answers one request with j's QP and waits until the connection is
// established, so that j can send at once even on iWARP.
func (l *cmListener) accept(ctx context.Context, j *jetty, id verbs.CMID) (provider.CMPeer, error) {
	c := l.c
	refuse := func(err error) (provider.CMPeer, error) {
		_ = id.Reject(nil)
		_ = id.Destroy()
		return nil, err
	}
	if !id.OnContext(c.vc) {
		return refuse(peerFailed{provider.Errorf(provider.ErrInvalid, "request came through another device than %s", c.dev.info.Name)})
	}
	from := id.Peer()
	j.sq.mu.Lock()
	defer j.sq.mu.Unlock()
	if err := j.free(); err != nil {
		// Bound meanwhile: the request waits for the next Accept.
		l.backlog = append([]verbs.CMID{id}, l.backlog...)
		return nil, err
	}
	qp, err := j.makeQP(id)
	if err != nil {
		return refuse(err)
	}
	r := c.newForeign(from)
	cn := &conn{id: id, qp: qp, ended: r.end}
	fail := func(err error) (provider.CMPeer, error) {
		c.unwatch(cn)
		j.rq.detach(cn)
		id.DestroyQP()
		_ = r.Close()
		_ = id.Destroy()
		return nil, err
	}
	j.rq.attach(cn, r.desc.ID) // before the peer can send, see acceptBind
	j.watch(cn)
	if err := id.Accept(nil, maxDepth, int(j.sq.rnrRetry)); err != nil {
		return fail(verbsErr("accept", err))
	}
	for {
		ev, err := l.eventWithin(ctx, connectTimeout)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, provider.ErrClosed) {
				err = peerFailed{err}
			}
			return fail(err)
		}
		switch {
		case ev.Type == verbs.CMConnectRequest:
			l.backlog = append(l.backlog, ev.ID)
			continue
		case ev.ID != id:
			continue
		case ev.Type != verbs.CMEstablished:
			return fail(peerFailed{provider.Errorf(provider.ErrFail, "connection from %v: %s (status %d)", from, verbs.CMEventName(ev.Type), ev.Status)})
		}
		break
	}
	if err := id.Migrate(c.cm.ch); err != nil {
		_ = id.Disconnect()
		return fail(verbsErr("migrate rdma_cm id", err))
	}
	j.mu.Lock()
	j.bound, j.cn, j.peer = r, cn, r.desc.ID
	j.mu.Unlock()
	return r, nil
}

// eventWithin is event with a time limit.
func (l *cmListener) eventWithin(ctx context.Context, d time.Duration) (verbs.CMEvent, error) {
	tctx, cancel := context.WithTimeoutCause(ctx, d, provider.Errorf(provider.ErrTimeout, "connection not established within %v", d))
	defer cancel()
	return l.event(tctx)
}
