package remote

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/urma-go/sdk/provider"
)

// CallerMemoryProvider is implemented by the provider context of every
// context a Peer opens (ctx.Raw()). Code that cannot import this package,
// such as the conformance suite, finds it with an interface assertion and
// takes its segment.Register buffers from it.
type CallerMemoryProvider interface {
	// CallerMemory is Peer.CallerMemory of the context's peer.
	CallerMemory(n int) ([]byte, error)
}

var _ CallerMemoryProvider = (*pContext)(nil)

// pContext is the proxy of a context in the peer.
type pContext struct {
	obj
	eid   provider.EID
	uasid uint32

	mu     sync.Mutex
	closed bool
	segs   map[*pSegment]struct{} // whose mappings Close undoes
	events map[uint64]uint64      // event handle -> owner id, until acked
}

func (c *pContext) EID() provider.EID { return c.eid }
func (c *pContext) UASID() uint32     { return c.uasid }

func (c *pContext) CallerMemory(n int) ([]byte, error) { return c.p.CallerMemory(n) }

func (c *pContext) AllocTokenID() (uint32, error) {
	r, err := rpcAllocTokenID.call(c.p.c, &hArgs{H: c.h})
	return r.ID, err
}

func (c *pContext) FreeTokenID(id uint32) error {
	_, err := rpcFreeTokenID.call(c.p.c, &tokenArgs{H: c.h, ID: id})
	return err
}

func (c *pContext) AllocSegment(size uint64, cfg provider.SegmentConfig) (provider.Segment, error) {
	r, err := rpcAllocSegment.call(c.p.c, &allocSegArgs{H: c.h, Size: size, Cfg: cfg})
	if err != nil {
		return nil, err
	}
	s := &pSegment{obj: obj{p: c.p, h: r.H}, ctx: c, desc: provider.SegmentDesc(r.Desc)}
	if r.Shared {
		m, err := mapPeerFile(c.p.Pid(), r.File, r.Off, s.desc.Len)
		if err != nil {
			_, _ = rpcClose.call(c.p.c, &hArgs{H: r.H})
			return nil, err
		}
		s.m, s.mem = m, m.mem
	}
	c.adopt(s)
	return s, nil
}

func (c *pContext) RegisterSegment(buf []byte, cfg provider.SegmentConfig) (provider.Segment, error) {
	a := &regSegArgs{H: c.h, Cfg: cfg}
	var view []byte
	if len(buf) > 0 {
		id, off, v, ok := c.p.callerRange(buf)
		if !ok {
			return nil, provider.Errorf(provider.ErrNotSupported,
				"the peer cannot register memory of this process; the buffer must come from Peer.CallerMemory")
		}
		a.Mem, a.Off, a.Len, view = id, off, len(buf), v
	}
	r, err := rpcRegisterSegment.call(c.p.c, a)
	if err != nil {
		return nil, err
	}
	s := &pSegment{obj: obj{p: c.p, h: r.H}, ctx: c, desc: provider.SegmentDesc(r.Desc), mem: view}
	c.adopt(s)
	return s, nil
}

// adopt records a segment whose mapping the context's Close undoes; if the
// context closed meanwhile, the segment is gone already.
func (c *pContext) adopt(s *pSegment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		s.release()
		return
	}
	c.segs[s] = struct{}{}
}

func (c *pContext) disown(s *pSegment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.segs, s)
}

func (c *pContext) ImportSegment(ctx context.Context, desc provider.SegmentDesc, token uint32) (provider.Target, error) {
	if err := provider.ContextErr(ctx); err != nil {
		return nil, err
	}
	r, err := rpcImportSegment.call(c.p.c, &importSegArgs{H: c.h, Desc: segDesc(desc), Token: token})
	if err != nil {
		return nil, err
	}
	return &pTarget{obj: obj{p: c.p, h: r.H}, desc: provider.SegmentDesc(r.Desc)}, nil
}

func (c *pContext) NewJFCE() (provider.JFCE, error) {
	r, err := rpcNewJFCE.call(c.p.c, &hArgs{H: c.h})
	if err != nil {
		return nil, err
	}
	return &pJFCE{obj: obj{p: c.p, h: r.H}}, nil
}

func (c *pContext) NewJFC(cfg provider.JFCConfig) (provider.JFC, error) {
	owner := c.p.ownerID(cfg.Owner)
	r, err := rpcNewJFC.call(c.p.c, &jfcArgs{H: c.h, Depth: cfg.Depth, JFCE: c.p.handleOf(cfg.JFCE),
		ModCount: cfg.ModerationCount, ModPeriod: cfg.ModerationPeriod, LockFree: cfg.LockFree, Owner: owner})
	if err != nil {
		c.p.dropOwners(owner)
		return nil, err
	}
	return &pJFC{obj: obj{p: c.p, h: r.H}, depth: r.Depth, owner: owner}, nil
}

func (c *pContext) NewJFS(cfg provider.JFSConfig) (provider.JFS, error) {
	w := c.p.jfsConfig(cfg)
	r, err := rpcNewJFS.call(c.p.c, &jfsArgs{H: c.h, Cfg: w})
	if err != nil {
		c.p.dropOwners(w.Owner)
		return nil, err
	}
	return &pJFS{sendSide: sendSide{queue{obj: obj{p: c.p, h: r.H}, owners: []uint64{w.Owner}}}}, nil
}

func (c *pContext) NewJFR(cfg provider.JFRConfig) (provider.JFR, error) {
	w := c.p.jfrConfig(cfg)
	r, err := rpcNewJFR.call(c.p.c, &jfrArgs{H: c.h, Cfg: w})
	if err != nil {
		c.p.dropOwners(w.Owner)
		return nil, err
	}
	return &pJFR{queue: queue{obj: obj{p: c.p, h: r.H}, owners: []uint64{w.Owner}},
		desc: provider.JettyDesc(r.Desc)}, nil
}

func (c *pContext) NewJetty(cfg provider.JettyConfig) (provider.Jetty, error) {
	a := &jettyArgs{H: c.h, Send: c.p.jfsConfig(cfg.Send), SharedJFR: c.p.handleOf(cfg.SharedJFR),
		Recv: c.p.jfrConfig(cfg.Recv), Owner: c.p.ownerID(cfg.Owner), Group: c.p.handleOf(cfg.Group)}
	owners := []uint64{a.Send.Owner, a.Recv.Owner, a.Owner}
	r, err := rpcNewJetty.call(c.p.c, a)
	if err != nil {
		c.p.dropOwners(owners...)
		return nil, err
	}
	return &pJetty{sendSide: sendSide{queue{obj: obj{p: c.p, h: r.H}, owners: owners}},
		desc: provider.JettyDesc(r.Desc)}, nil
}

func (c *pContext) Import(ctx context.Context, desc provider.JettyDesc, token uint32) (provider.Remote, error) {
	if err := provider.ContextErr(ctx); err != nil {
		return nil, err
	}
	r, err := rpcImport.call(c.p.c, &importArgs{H: c.h, Desc: jettyDesc(desc), Token: token})
	if err != nil {
		return nil, err
	}
	return &pRemote{obj: obj{p: c.p, h: r.H}, desc: provider.JettyDesc(r.Desc)}, nil
}

// AsyncEvent passes ctx's deadline to the peer, and its cancellation as a
// request of its own; it always waits for the peer's answer, so that an
// event the peer handed out just before the cancel is not lost.
func (c *pContext) AsyncEvent(ctx context.Context) (provider.AsyncEvent, error) {
	a := &asyncEventArgs{H: c.h, Timeout: -1, CancelID: c.p.nextCall.Add(1)}
	if dl, ok := ctx.Deadline(); ok {
		a.Timeout = max(0, time.Until(dl))
	}
	a.Canceled = ctx.Err() != nil
	r, done := rpcAsyncEvent.start(c.p.c, a)
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// A deadline is the peer's to enforce (it has it, and answers
		// ErrTimeout at the same moment); only a cancellation is sent.
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			_, _ = rpcCancel.start(c.p.c, &cancelArgs{ID: a.CancelID})
		}
		err = <-done
	}
	if err != nil {
		if _, ok := ctx.Deadline(); ok && errors.Is(err, provider.ErrTimeout) {
			// The peer's timer can fire before ours runs: ctx.Err stays nil
			// until then even though the deadline has passed. The caller's
			// deadline is the one that counts, and it is at most that
			// moment away.
			<-ctx.Done()
		}
		if ctx.Err() != nil {
			// The peer's context error crossed the wire as a status or as
			// text; give the caller its own, in the SDK's convention.
			err = provider.ContextErr(ctx)
		}
		return provider.AsyncEvent{}, err
	}
	c.mu.Lock()
	c.events[r.Handle] = r.Owner
	c.mu.Unlock()
	return provider.AsyncEvent{Type: r.Type, Object: c.p.owner(r.Owner), Port: r.Port, Handle: r.Handle}, nil
}

// AckAsyncEvent sends the event back with the owner number it came with;
// an event this proxy never handed out goes with none, for the peer's
// provider to refuse.
func (c *pContext) AckAsyncEvent(ev provider.AsyncEvent) error {
	c.mu.Lock()
	owner := c.events[ev.Handle]
	c.mu.Unlock()
	_, err := rpcAckAsyncEvent.call(c.p.c, &ackArgs{H: c.h,
		Ev: event{Type: ev.Type, Owner: owner, Port: ev.Port, Handle: ev.Handle}})
	if err == nil {
		c.mu.Lock()
		delete(c.events, ev.Handle)
		c.mu.Unlock()
	}
	return err
}

// Close closes the context in the peer and unmaps the memory of its
// segments here, as closing a context unmaps its segments' memory.
func (c *pContext) Close() error {
	_, err := rpcClose.call(c.p.c, &hArgs{H: c.h})
	if err == nil || provider.StatusOf(err) == provider.StatusClosed {
		c.release()
		c.p.untrack(c)
	}
	if isLost(err) {
		return nil
	}
	return err
}

func (c *pContext) release() {
	c.mu.Lock()
	c.closed = true
	segs := c.segs
	c.segs = map[*pSegment]struct{}{}
	c.mu.Unlock()
	for s := range segs {
		s.release()
	}
}
