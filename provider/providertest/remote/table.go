package remote

import (
	"github.com/urma-go/sdk/provider"
)

// The peer's handle table and the stand-ins it uses in place of objects the
// test process named but the peer does not have.

// add stores v, an object of the context with handle ctx, and returns its
// handle.
func (s *session) add(v any, ctx uint64) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.objs[s.next] = entry{v: v, ctx: ctx}
	return s.next
}

// addContext stores a context; its entry names itself as its context.
func (s *session) addContext(c provider.Context) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.objs[s.next] = entry{v: c, ctx: s.next}
	s.ctxs = append(s.ctxs, c)
	return s.next
}

// forget drops a closed context and its objects. Calls on them then fail
// with ErrClosed, which is what the provider contract gives for objects of
// a closed context, and the peer does not keep them for ever.
func (s *session) forget(ctx uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.objs[ctx]; ok {
		for i, c := range s.ctxs {
			if c == e.v {
				s.ctxs = append(s.ctxs[:i], s.ctxs[i+1:]...)
				break
			}
		}
	}
	for h, e := range s.objs {
		if e.ctx == ctx {
			delete(s.objs, h)
		}
	}
}

func (s *session) lookup(h uint64) (entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.objs[h]
	return e, ok
}

// get returns the object with handle h as a T.
func get[T any](s *session, h uint64, what string) (T, error) {
	var zero T
	e, ok := s.lookup(h)
	if !ok {
		return zero, provider.Errorf(provider.ErrClosed, "%s is closed (its context was closed)", what)
	}
	v, ok := e.v.(T)
	if !ok {
		return zero, provider.Errorf(provider.ErrInvalid, "the object is not a %s", what)
	}
	return v, nil
}

// configObj resolves an object a config refers to: nil for noHandle, an
// error for an object of another provider, as providers give for it.
func configObj[T any](s *session, h uint64, what string) (T, error) {
	var zero T
	switch h {
	case noHandle:
		return zero, nil
	case foreignHandle:
		return zero, provider.Errorf(provider.ErrInvalid, "%s of another provider", what)
	}
	return get[T](s, h, what)
}

func (s *session) ctx(h uint64) (provider.Context, error) {
	return get[provider.Context](s, h, "context")
}

// foreignMem and foreignRemote stand in for a MemRef or Remote of another
// provider in a request: the peer's provider sees an object it does not
// know and refuses it as it would any such object.
type foreignMem struct{ d provider.SegmentDesc }

func (m *foreignMem) Desc() provider.SegmentDesc { return m.d }

type foreignRemote struct{ d provider.JettyDesc }

func (r *foreignRemote) Desc() provider.JettyDesc { return r.d }
func (r *foreignRemote) Close() error             { return nil }

func (s *session) memRef(h uint64, foreign segDesc) (provider.MemRef, error) {
	switch h {
	case noHandle:
		return nil, nil
	case foreignHandle:
		return &foreignMem{d: provider.SegmentDesc(foreign)}, nil
	}
	return get[provider.MemRef](s, h, "segment")
}

func (s *session) remote(r remoteRef) (provider.Remote, error) {
	switch r.H {
	case noHandle:
		return nil, nil
	case foreignHandle:
		return &foreignRemote{d: provider.JettyDesc(r.Foreign)}, nil
	}
	return get[provider.Remote](s, r.H, "imported jfr or jetty")
}

func (s *session) sges(in []sge) ([]provider.SGE, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]provider.SGE, len(in))
	for i, g := range in {
		m, err := s.memRef(g.Seg, g.Foreign)
		if err != nil {
			return nil, err
		}
		out[i] = provider.SGE{Seg: m, Addr: g.Addr, Len: g.Len}
	}
	return out, nil
}

// ownerRef is the Owner the peer gives its provider's objects; the test
// process maps the number back to the real Owner.
type ownerRef uint64

func ownerOf(id uint64) any {
	if id == 0 {
		return nil
	}
	return ownerRef(id)
}

func ownerID(v any) uint64 {
	r, _ := v.(ownerRef)
	return uint64(r)
}
