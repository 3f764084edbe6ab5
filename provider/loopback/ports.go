package loopback

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
)

// Ports: a context keeps the Jettys published under a port in a table;
// its control server answers a ResolvePort request from it. A resolver at
// another context (of this process or another) asks the contexts at the
// EID in turn over their control sockets, the connection imports use, so
// the peer is a process of this user (SO_PEERCRED both ways) and the
// token is handed only to such a process.

var _ provider.Ports = (*lbContext)(nil)

// portTable maps ports to what was published under them.
type portTable struct {
	mu sync.Mutex
	m  map[uint16]published
}

type published struct {
	desc  provider.JettyDesc
	token uint32
}

// PublishPort implements provider.Ports.
func (c *lbContext) PublishPort(port uint16, desc provider.JettyDesc, token uint32) (io.Closer, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if port == 0 {
		return nil, provider.Errorf(provider.ErrInvalid, "port 0 cannot be published")
	}
	if err := desc.Validate(); err != nil {
		return nil, err
	}
	t := &c.ports
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[port]; ok {
		return nil, provider.Errorf(provider.ErrExist, "port %d is published at %v uasid %d", port, c.eid, c.uasid)
	}
	if t.m == nil {
		t.m = map[uint16]published{}
	}
	t.m[port] = published{desc, token}
	return &portCloser{t: t, port: port}, nil
}

type portCloser struct {
	t    *portTable
	port uint16
	once sync.Once
}

func (p *portCloser) Close() error {
	p.once.Do(func() {
		p.t.mu.Lock()
		delete(p.t.m, p.port)
		p.t.mu.Unlock()
	})
	return nil
}

func (t *portTable) lookup(port uint16) (published, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.m[port]
	return p, ok
}

// answerResolvePort is the server's side of a ResolvePort request.
func (c *lbContext) answerResolvePort(w *wire.Buf) ([]byte, error) {
	port := w.GetU32()
	if w.Short || len(w.Bytes) != 0 || port == 0 || port > 0xffff {
		return nil, provider.Errorf(provider.ErrInvalid, "malformed port request")
	}
	p, ok := c.ports.lookup(uint16(port))
	if !ok {
		return nil, provider.Errorf(provider.ErrNotFound, "no port %d at %v uasid %d", port, c.eid, c.uasid)
	}
	b, err := p.desc.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return (&wire.Buf{Bytes: b}).U32(p.token).Bytes, nil
}

// ResolvePort implements provider.Ports: c's own table first when c is
// at dst, then every other context at dst on this host, by UASID.
func (c *lbContext) ResolvePort(ctx context.Context, dst provider.EID, port uint16) (provider.JettyDesc, uint32, error) {
	if err := c.check(); err != nil {
		return provider.JettyDesc{}, 0, err
	}
	if port == 0 {
		return provider.JettyDesc{}, 0, provider.Errorf(provider.ErrInvalid, "port 0 cannot be resolved")
	}
	if err := provider.ContextErr(ctx); err != nil {
		return provider.JettyDesc{}, 0, err
	}
	if dst == c.eid {
		if p, ok := c.ports.lookup(port); ok {
			return p.desc, p.token, nil
		}
	}
	for _, u := range c.contextsAt(dst) {
		desc, token, err := c.resolveAt(ctx, dst, u, port)
		// A context without the port, one that is gone, or one of a
		// process that predates ports: try the next.
		if errors.Is(err, provider.ErrNotFound) || errors.Is(err, provider.ErrNotSupported) {
			continue
		}
		return desc, token, err
	}
	return provider.JettyDesc{}, 0, provider.Errorf(provider.ErrNotFound, "no context at eid %v publishes port %d (in %s)", dst, port, c.dir)
}

func (c *lbContext) resolveAt(ctx context.Context, dst provider.EID, uasid uint32, port uint16) (provider.JettyDesc, uint32, error) {
	p, err := c.peer(ctx, dst, uasid)
	if err != nil {
		return provider.JettyDesc{}, 0, err
	}
	m, err := p.rpc(ctx, wire.ResolvePort, (&wire.Buf{}).U32(uint32(port)).Bytes, 0)
	if err != nil {
		return provider.JettyDesc{}, 0, err
	}
	m.CloseFDs()
	w := wire.Buf{Bytes: m.Payload}
	var desc provider.JettyDesc
	err = desc.UnmarshalBinary(w.Take(provider.JettyDescSize))
	token := w.GetU32()
	if err != nil || w.Short || len(w.Bytes) != 0 {
		return provider.JettyDesc{}, 0, provider.Errorf(provider.ErrFail, "peer process %d answered a port request with %d malformed bytes", p.pid, len(m.Payload))
	}
	return desc, token, nil
}
