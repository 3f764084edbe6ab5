// Package rdmacm connects a Jetty to a program written against plain
// librdmacm and verbs, such as rdma-core's rping, instead of to another
// URMA Jetty.
//
// Such a peer knows nothing of descriptors, UASIDs and tokens: it listens
// or connects on an IP address and port with rdma_cm, with no private data,
// and names memory by address and rkey. Dial and Listener.Accept make that
// ordinary RC connection the Jetty's, binding it as Jetty.Bind would:
// Send, Write and Read without a Target then go to the peer, and receives
// come from it. Conn.Key gives the address and rkey of a segment for the
// peer, and Conn.Import turns the peer's address and rkey into a Target.
//
// Only providers that run on verbs have rdma_cm (ib); on the others Dial
// and Listen fail with urma.ErrNotSupported. A broken connection is not
// remade: requests after it complete with REM_ACCESS_ABORT_ERR.
package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Conn is a Jetty's connection to a plain rdma_cm peer.
type Conn struct {
	j    *jetty.Jetty
	cm   provider.RDMACM
	p    provider.CMPeer
	peer *jetty.Remote
}

func newConn(j *jetty.Jetty, cm provider.RDMACM, p provider.CMPeer) *Conn {
	return &Conn{j: j, cm: cm, p: p, peer: jetty.WrapRemote(p)}
}

// Done is closed when the connection ends: the peer disconnected (rping
// does when its count is done), the connection failed, or Close.
func (c *Conn) Done() <-chan struct{} { return c.p.Done() }

// Dial connects the unbound RC Jetty j to the rdma_cm listener at addr
// ("host:port", as rping -s -a host -p port listens). ctx bounds the
// connect; the connection outlives it.
func Dial(ctx context.Context, j *jetty.Jetty, addr string) (*Conn, error) {
	cm, err := rdmacmOf(j, "rdma_cm dial")
	if err != nil {
		return nil, err
	}
	ap, err := parseAddr(addr, false)
	if err != nil {
		return nil, &urma.OpError{Op: "rdma_cm dial", Obj: addr, Err: err}
	}
	r, err := cm.DialRDMACM(ctx, j.Raw(), ap)
	if err != nil {
		if ctx.Err() != nil {
			err = errors.Join(ctx.Err(), err)
		}
		return nil, &urma.OpError{Op: "rdma_cm dial", Obj: addr, Err: err}
	}
	return newConn(j, cm, r), nil
}

// Peer is the Remote standing for the peer; the Jetty is bound to it.
func (c *Conn) Peer() *jetty.Remote { return c.peer }

// PeerAddr is the peer's address and port.
func (c *Conn) PeerAddr() netip.AddrPort {
	id := c.peer.Descriptor().ID
	return netip.AddrPortFrom(id.EID.Addr().Unmap(), uint16(id.UASID))
}

// Key returns the address and rkey the peer uses to READ or WRITE s: what
// an rping advertisement carries. s must allow remote access.
func (c *Conn) Key(s *segment.Segment) (va uint64, rkey uint32, err error) {
	if s == nil {
		return 0, 0, &urma.OpError{Op: "rdma_cm key", Err: provider.Errorf(urma.ErrInvalid, "nil segment")}
	}
	va, rkey, err = c.cm.SegmentKey(s.Raw())
	if err != nil {
		return 0, 0, &urma.OpError{Op: "rdma_cm key", Err: err}
	}
	return va, rkey, nil
}

// Import makes a Target of length bytes at va that the peer advertised
// with rkey. Nothing checks the key until a request uses it: a wrong one
// fails that request with a remote access error, as on verbs. Close the
// Target when done.
func (c *Conn) Import(va, length uint64, rkey uint32) (*segment.Target, error) {
	t, err := c.cm.ImportKey(c.peer.Raw(), va, length, rkey)
	if err != nil {
		return nil, &urma.OpError{Op: "rdma_cm import", Obj: fmt.Sprintf("%#x+%d rkey %#x", va, length, rkey), Err: err}
	}
	return segment.WrapTarget(t), nil
}

// Close disconnects: the Jetty is unbound and can connect again. Requests
// still queued complete with errors (flushed). Idempotent.
func (c *Conn) Close() error {
	err := c.j.Unbind()
	if errors.Is(err, urma.ErrInvalid) || errors.Is(err, urma.ErrClosed) {
		err = nil // unbound already, or the Jetty is gone and the connection with it
	}
	return errors.Join(err, c.peer.Close())
}

// Listener accepts rdma_cm connections from plain verbs peers.
type Listener struct {
	p provider.CMListener
}

// Listen listens at addr ("host:port"; an empty host is the context's EID,
// port 0 picks one) on uctx's device, as rping -s does.
func Listen(uctx *urma.Context, addr string) (*Listener, error) {
	if uctx == nil {
		return nil, &urma.OpError{Op: "rdma_cm listen", Err: provider.Errorf(urma.ErrInvalid, "nil context")}
	}
	cm, ok := uctx.Raw().(provider.RDMACM)
	if !ok {
		return nil, &urma.OpError{Op: "rdma_cm listen", Err: notSupported(uctx)}
	}
	ap, err := parseAddr(addr, true)
	if err != nil {
		return nil, &urma.OpError{Op: "rdma_cm listen", Obj: addr, Err: err}
	}
	l, err := cm.ListenRDMACM(ap)
	if err != nil {
		return nil, &urma.OpError{Op: "rdma_cm listen", Obj: addr, Err: err}
	}
	return &Listener{p: l}, nil
}

// Addr is the address and port the listener is bound to.
func (l *Listener) Addr() netip.AddrPort { return l.p.Addr() }

// Accept waits for a connection request and accepts it onto the unbound
// RC Jetty j, returning when the connection is established. A request that
// fails before that (the peer gave up) is skipped. Cancelling ctx ends the
// wait.
func (l *Listener) Accept(ctx context.Context, j *jetty.Jetty) (*Conn, error) {
	cm, err := rdmacmOf(j, "rdma_cm accept")
	if err != nil {
		return nil, err
	}
	r, err := l.p.Accept(ctx, j.Raw())
	if err != nil {
		return nil, &urma.OpError{Op: "rdma_cm accept", Obj: l.Addr().String(), Err: err}
	}
	return newConn(j, cm, r), nil
}

// Close stops listening; connections already accepted stay. Requests not
// yet accepted are rejected.
func (l *Listener) Close() error {
	if err := l.p.Close(); err != nil && !errors.Is(err, urma.ErrClosed) {
		return &urma.OpError{Op: "rdma_cm listener close", Err: err}
	}
	return nil
}

func rdmacmOf(j *jetty.Jetty, op string) (provider.RDMACM, error) {
	if j == nil {
		return nil, &urma.OpError{Op: op, Err: provider.Errorf(urma.ErrInvalid, "nil jetty")}
	}
	cm, ok := j.Context().Raw().(provider.RDMACM)
	if !ok {
		return nil, &urma.OpError{Op: op, Err: notSupported(j.Context())}
	}
	return cm, nil
}

func notSupported(c *urma.Context) error {
	return provider.Errorf(urma.ErrNotSupported, "device %v has no rdma_cm: plain rdma_cm peers need a verbs provider (ib)", c.Device())
}

// parseAddr reads "host:port"; the host must be an IP address (rdma_cm
// resolves addresses, not names), and may be empty only for a listener.
func parseAddr(s string, listen bool) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return netip.AddrPort{}, provider.Errorf(urma.ErrInvalid, "address %q: %v", s, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 && !listen {
		return netip.AddrPort{}, provider.Errorf(urma.ErrInvalid, "address %q: port must be 1..65535", s)
	}
	if host == "" {
		if !listen {
			return netip.AddrPort{}, provider.Errorf(urma.ErrInvalid, "address %q names no host", s)
		}
		return netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(p)), nil
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.AddrPort{}, provider.Errorf(urma.ErrInvalid, "address %q: host must be an IP address", s)
	}
	return netip.AddrPortFrom(a, uint16(p)), nil
}
