//go:build cgo && urma_verbs

package ib

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/urma-go/sdk/provider"
)

// Ports: a published port is an rdma_cm listener of its own on the
// context's EID at the port itself, which answers a port request
// (opResolvePort) with a reject carrying the Jetty's descriptor and token,
// as the context's listener answers imports. urmanet ports and UASIDs
// share the host's rdma_cm port space, so a port is held once per address:
// one some context holds as its UASID, or another publication, gives
// ErrExist, like a TCP port in use, and a port request to a UASID gets
// ErrNotFound. Whoever reaches the EID on the fabric can resolve a port;
// the token is the Jetty's protection, as with any exported Jetty.

var _ provider.Ports = (*ibContext)(nil)

// PublishPort implements provider.Ports.
func (c *ibContext) PublishPort(port uint16, desc provider.JettyDesc, token uint32) (io.Closer, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if port == 0 {
		return nil, provider.Errorf(provider.ErrInvalid, "port 0 cannot be published")
	}
	ans, err := portAnswer(desc, token)
	if err != nil {
		return nil, err
	}
	l, err := listenAnswer(c.eid.addr, port, c.scope(), "urmanet port", func(req request) []byte {
		if req.op != opResolvePort || req.target != uint32(port) {
			return (&reply{status: replyNotFound}).marshal()
		}
		return ans
	})
	if errors.Is(err, provider.ErrExist) {
		return nil, provider.Errorf(provider.ErrExist, "port %d at %v is in use (by a context's listener, whose UASID it is, or another publication): %v", port, c.eid.addr, err)
	}
	if err != nil {
		return nil, err
	}
	l.closed = func() { c.ports.remove(l) }
	if !c.ports.add(l) {
		_ = l.Close()
		return nil, errClosed("context")
	}
	return l, nil
}

// ResolvePort implements provider.Ports.
func (c *ibContext) ResolvePort(ctx context.Context, dst provider.EID, port uint16) (provider.JettyDesc, uint32, error) {
	if err := c.check(); err != nil {
		return provider.JettyDesc{}, 0, err
	}
	if port == 0 {
		return provider.JettyDesc{}, 0, provider.Errorf(provider.ErrInvalid, "port 0 cannot be resolved")
	}
	d, err := c.dial(ctx, dst, uint32(port), portRequest(port, c.uasid), c.probeQP)
	if err != nil {
		if errors.Is(err, provider.ErrNotFound) && ctx.Err() == nil {
			return provider.JettyDesc{}, 0, provider.Errorf(provider.ErrNotFound, "nothing publishes port %d at eid %v: %v", port, dst, err)
		}
		return provider.JettyDesc{}, 0, err
	}
	if !d.id.IsZero() {
		// A listener that is not a urma context's accepted: hang up.
		_ = d.id.Disconnect()
		d.id.DestroyQP()
		_ = d.id.Destroy()
		return provider.JettyDesc{}, 0, provider.Errorf(provider.ErrFail, "the listener at %v port %d is not a urma context's: it accepted a port request", dst, port)
	}
	desc, token, err := parsePortAnswer(d.data)
	if errors.Is(err, provider.ErrNotFound) {
		return provider.JettyDesc{}, 0, provider.Errorf(provider.ErrNotFound, "nothing publishes port %d at eid %v (%v)", port, dst, err)
	}
	return desc, token, err
}

// portSet holds a context's published ports, which its Close closes.
type portSet struct {
	mu     sync.Mutex
	closed bool
	m      map[*answerer]struct{}
}

// add records l, or reports false once the context closed.
func (s *portSet) add(l *answerer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.m == nil {
		s.m = map[*answerer]struct{}{}
	}
	s.m[l] = struct{}{}
	return true
}

func (s *portSet) remove(l *answerer) {
	s.mu.Lock()
	delete(s.m, l)
	s.mu.Unlock()
}

// closeAll closes every published port and refuses later ones.
func (s *portSet) closeAll() {
	s.mu.Lock()
	s.closed = true
	ls := make([]*answerer, 0, len(s.m))
	for l := range s.m {
		ls = append(ls, l)
	}
	s.mu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
}
