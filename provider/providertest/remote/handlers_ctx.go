package remote

import (
	"context"
	"os"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// The peer's answers to requests on devices and contexts.

func init() {
	serve(rpcPing, (*session).ping)
	serve(rpcDevice, (*session).device)
	serve(rpcOpen, (*session).open)
	serve(rpcCallerMem, (*session).callerMem)
	serve(rpcCancel, (*session).cancel)
	serve(rpcAllocTokenID, (*session).allocTokenID)
	serve(rpcFreeTokenID, (*session).freeTokenID)
	serve(rpcAllocSegment, (*session).allocSegment)
	serve(rpcRegisterSegment, (*session).registerSegment)
	serve(rpcImportSegment, (*session).importSegment)
	serve(rpcNewJFCE, (*session).newJFCE)
	serve(rpcNewJFC, (*session).newJFC)
	serve(rpcNewJFS, (*session).newJFS)
	serve(rpcNewJFR, (*session).newJFR)
	serve(rpcNewJetty, (*session).newJetty)
	serve(rpcImport, (*session).importRemote)
	serve(rpcAsyncEvent, (*session).asyncEvent)
	serve(rpcAckAsyncEvent, (*session).ackAsyncEvent)
	serve(rpcClose, (*session).close)
}

func (s *session) ping(*empty) (*pingReply, error) { return &pingReply{Pid: os.Getpid()}, nil }

func findDevice(name string) (provider.Device, error) {
	d, err := urma.DeviceByName(name)
	if err != nil {
		return nil, err
	}
	return d.Raw(), nil
}

func (s *session) device(a *deviceArgs) (*deviceReply, error) {
	d, err := findDevice(a.Name)
	if err != nil {
		return nil, err
	}
	return &deviceReply{Attr: d.Attr(), EIDs: d.EIDs()}, nil
}

func (s *session) open(a *openArgs) (*openReply, error) {
	d, err := findDevice(a.Device)
	if err != nil {
		return nil, err
	}
	c, err := d.Open(a.EIDIndex)
	if err != nil {
		return nil, err
	}
	return &openReply{H: s.addContext(c), EID: c.EID(), UASID: c.UASID()}, nil
}

func (s *session) callerMem(a *callerMemArgs) (*callerMemReply, error) {
	m, err := newCallerMem(a.N)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.mems[s.next] = m
	return &callerMemReply{ID: s.next, File: m.file}, nil
}

func (s *session) cancel(a *cancelArgs) (*empty, error) {
	s.mu.Lock()
	f := s.cancels[a.ID]
	s.mu.Unlock()
	if f != nil {
		f()
	}
	return nil, nil
}

func (s *session) allocTokenID(a *hArgs) (*tokenReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	id, err := c.AllocTokenID()
	return &tokenReply{ID: id}, err
}

func (s *session) freeTokenID(a *tokenArgs) (*empty, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	return nil, c.FreeTokenID(a.ID)
}

func (s *session) allocSegment(a *allocSegArgs) (*segReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	seg, err := c.AllocSegment(a.Size, a.Cfg)
	if err != nil {
		return nil, err
	}
	r := &segReply{H: s.add(seg, a.H), Desc: segDesc(seg.Desc())}
	if sm, ok := seg.(provider.SharedMemory); ok {
		if fd, off, ok := sm.MemFD(); ok {
			if id, err := identify(fd); err == nil {
				r.Shared, r.File, r.Off = true, id, off
			}
		}
	}
	return r, nil
}

func (s *session) registerSegment(a *regSegArgs) (*segReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	var buf []byte
	if a.Mem != 0 {
		s.mu.Lock()
		m := s.mems[a.Mem]
		s.mu.Unlock()
		if m == nil {
			return nil, provider.Errorf(provider.ErrInvalid, "unknown caller memory %d", a.Mem)
		}
		if a.Off < 0 || a.Len < 0 || a.Off > len(m.mem) || a.Len > len(m.mem)-a.Off {
			return nil, provider.Errorf(provider.ErrInvalid, "range [%d,+%d) outside caller memory of %d bytes", a.Off, a.Len, len(m.mem))
		}
		buf = m.mem[a.Off : a.Off+a.Len : a.Off+a.Len]
	}
	seg, err := c.RegisterSegment(buf, a.Cfg)
	if err != nil {
		return nil, err
	}
	return &segReply{H: s.add(seg, a.H), Desc: segDesc(seg.Desc())}, nil
}

func (s *session) importSegment(a *importSegArgs) (*targetReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	t, err := c.ImportSegment(context.Background(), provider.SegmentDesc(a.Desc), a.Token)
	if err != nil {
		return nil, err
	}
	return &targetReply{H: s.add(t, a.H), Desc: segDesc(t.Desc())}, nil
}

func (s *session) newJFCE(a *hArgs) (*newReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	e, err := c.NewJFCE()
	if err != nil {
		return nil, err
	}
	return &newReply{H: s.add(e, a.H)}, nil
}

func (s *session) newJFC(a *jfcArgs) (*jfcReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	cfg := provider.JFCConfig{Depth: a.Depth, ModerationCount: a.ModCount, ModerationPeriod: a.ModPeriod,
		LockFree: a.LockFree, Owner: ownerOf(a.Owner)}
	if cfg.JFCE, err = configObj[provider.JFCE](s, a.JFCE, "jfce"); err != nil {
		return nil, err
	}
	j, err := c.NewJFC(cfg)
	if err != nil {
		return nil, err
	}
	return &jfcReply{H: s.add(j, a.H), Depth: j.Depth()}, nil
}

func (s *session) jfsConfig(w jfsConfig) (provider.JFSConfig, error) {
	jfc, err := configObj[provider.JFC](s, w.JFC, "jfc")
	c := provider.JFSConfig{Depth: w.Depth, Mode: w.Mode, MaxSGE: w.MaxSGE, MaxInline: w.MaxInline,
		RNRRetry: w.RNRRetry, RNRTimeout: w.RNRTimeout, JFC: jfc, Owner: ownerOf(w.Owner)}
	w.Knobs.fill(&c)
	return c, err
}

func (s *session) jfrConfig(w jfrConfig) (provider.JFRConfig, error) {
	jfc, err := configObj[provider.JFC](s, w.JFC, "jfc")
	return provider.JFRConfig{Depth: w.Depth, Mode: w.Mode, MaxSGE: w.MaxSGE, TokenPolicy: w.TokenPolicy,
		Token: w.Token, JFC: jfc, Owner: ownerOf(w.Owner), RxThreshold: w.RxThreshold}, err
}

func (s *session) newJFS(a *jfsArgs) (*newReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	cfg, err := s.jfsConfig(a.Cfg)
	if err != nil {
		return nil, err
	}
	j, err := c.NewJFS(cfg)
	if err != nil {
		return nil, err
	}
	return &newReply{H: s.add(j, a.H)}, nil
}

func (s *session) newJFR(a *jfrArgs) (*remoteReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	cfg, err := s.jfrConfig(a.Cfg)
	if err != nil {
		return nil, err
	}
	j, err := c.NewJFR(cfg)
	if err != nil {
		return nil, err
	}
	return &remoteReply{H: s.add(j, a.H), Desc: jettyDesc(j.Desc())}, nil
}

func (s *session) newJetty(a *jettyArgs) (*remoteReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	cfg := provider.JettyConfig{Owner: ownerOf(a.Owner)}
	if cfg.Send, err = s.jfsConfig(a.Send); err != nil {
		return nil, err
	}
	if cfg.Recv, err = s.jfrConfig(a.Recv); err != nil {
		return nil, err
	}
	if cfg.SharedJFR, err = configObj[provider.JFR](s, a.SharedJFR, "jfr"); err != nil {
		return nil, err
	}
	if cfg.Group, err = configObj[provider.JettyGroup](s, a.Group, "jetty group"); err != nil {
		return nil, err
	}
	j, err := c.NewJetty(cfg)
	if err != nil {
		return nil, err
	}
	return &remoteReply{H: s.add(j, a.H), Desc: jettyDesc(j.Desc())}, nil
}

func (s *session) importRemote(a *importArgs) (*remoteReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	r, err := c.Import(context.Background(), provider.JettyDesc(a.Desc), a.Token)
	if err != nil {
		return nil, err
	}
	return &remoteReply{H: s.add(r, a.H), Desc: jettyDesc(r.Desc())}, nil
}

// prepare makes the call's context while the request is read, before any
// later opCancel for it can be.
func (a *asyncEventArgs) prepare(s *session) {
	var ctx context.Context
	var cancel context.CancelFunc
	if a.Timeout >= 0 {
		ctx, cancel = context.WithTimeout(context.Background(), a.Timeout)
	} else {
		ctx, cancel = context.WithCancel(context.Background())
	}
	if a.Canceled {
		cancel()
	}
	a.ctx, a.cancel = ctx, cancel
	s.mu.Lock()
	s.cancels[a.CancelID] = cancel
	s.mu.Unlock()
}

func (s *session) asyncEvent(a *asyncEventArgs) (*event, error) {
	if a.ctx == nil {
		a.prepare(s)
	}
	defer func() {
		a.cancel()
		s.mu.Lock()
		delete(s.cancels, a.CancelID)
		s.mu.Unlock()
	}()
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	ev, err := c.AsyncEvent(a.ctx)
	return &event{Type: ev.Type, Owner: ownerID(ev.Object), Port: ev.Port, Handle: ev.Handle}, err
}

func (s *session) ackAsyncEvent(a *ackArgs) (*empty, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	return nil, c.AckAsyncEvent(provider.AsyncEvent{Type: a.Ev.Type, Object: ownerOf(a.Ev.Owner),
		Port: a.Ev.Port, Handle: a.Ev.Handle})
}

// close closes any object; a context that closed takes its objects out of
// the table with it.
func (s *session) close(a *hArgs) (*empty, error) {
	e, ok := s.lookup(a.H)
	if !ok {
		return nil, provider.Errorf(provider.ErrClosed, "already closed (its context was closed)")
	}
	c, ok := e.v.(interface{ Close() error })
	if !ok {
		return nil, provider.Errorf(provider.ErrInvalid, "the object cannot be closed")
	}
	err := c.Close()
	if e.ctx == a.H && (err == nil || provider.StatusOf(err) == provider.StatusClosed) {
		s.forget(a.H)
	}
	return nil, err
}
