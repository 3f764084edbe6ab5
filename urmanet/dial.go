package urmanet

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// ErrRefused: the listener refused the connection (its backlog is full).
var ErrRefused = errors.New("urmanet: connection refused")

// ErrPeerLost: the peer stopped answering (its process or host is gone)
// or its Jetty is (it closed without a FIN reaching this side);
// the connection is failed and every later Read and Write returns it.
var ErrPeerLost = errors.New("urmanet: peer lost")

// Dialer dials urmanet connections. The zero value dials with no timeout.
type Dialer struct {
	// Timeout bounds a dial, with the context's deadline; 0 means none.
	Timeout time.Duration
	// Deadline, when not zero, is when a dial fails at the latest.
	Deadline time.Time
	// Poll makes the connection poll for its messages without ever
	// sleeping: a waiting Read or Write spins on its core (yielding to
	// other goroutines), for the lowest latency. The default spins for a
	// few microseconds and then sleeps until a message arrives.
	Poll bool
}

// Dial connects to addr ("eid:port") from uctx.
func Dial(ctx context.Context, uctx *urma.Context, addr string) (net.Conn, error) {
	var d Dialer
	return d.Dial(ctx, uctx, addr)
}

// Dial connects to addr from uctx: it resolves the listener through the
// provider (provider.Ports), then shakes hands over URMA (see the package
// doc). A provider without ports gives urma.ErrNotSupported; no listener
// at addr gives urma.ErrNotFound; a full backlog gives ErrRefused.
func (d *Dialer) Dial(ctx context.Context, uctx *urma.Context, addr string) (net.Conn, error) {
	a, err := ParseAddr(addr)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: Network, Err: err}
	}
	c, err := d.dial(ctx, uctx, a)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: Network, Addr: a, Err: err}
	}
	return c, nil
}

func (d *Dialer) dial(ctx context.Context, uctx *urma.Context, a Addr) (*Conn, error) {
	if uctx == nil {
		return nil, provider.Errorf(urma.ErrInvalid, "nil context")
	}
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	if !d.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Deadline)
		defer cancel()
	}
	ports, err := portsOf(uctx)
	if err != nil {
		return nil, err
	}
	desc, token, err := ports.ResolvePort(ctx, provider.EID(a.EID), a.Port)
	if err != nil {
		return nil, err
	}
	c, err := newConn(uctx, d.Poll, true)
	if err != nil {
		return nil, err
	}
	c.local, c.remote = Addr{EID: uctx.EID()}, a
	if err := c.handshake(ctx, jetty.DescriptorOf(desc), token); err != nil {
		c.Close()
		return nil, err
	}
	c.start()
	return c, nil
}

// handshake sends a SYN to the listener's Jetty and waits for its SYNACK.
func (c *Conn) handshake(ctx context.Context, desc jetty.Descriptor, token uint32) error {
	l, err := jetty.ImportJetty(ctx, c.uctx, desc, token)
	if err != nil {
		return err
	}
	defer l.Unimport()
	if err := c.j.Advise(ctx, l); err != nil {
		return err
	}
	i := c.freeCtl[len(c.freeCtl)-1]
	c.freeCtl = c.freeCtl[:len(c.freeCtl)-1]
	n, err := c.synPayload(i, msgSyn)
	if err != nil {
		return err
	}
	if err := c.j.Send(l, c.seg.SGE(uint64(i*SlotSize), uint32(n)), 0, uint64(i)); err != nil {
		return err
	}
	crs := make([]jetty.CR, 16)
	for {
		n, err := c.jfc.PollWait(ctx, crs, spinFor)
		if err != nil {
			return err
		}
		c.mu.Lock()
		for k := range n {
			c.handleLocked(&crs[k])
		}
		s, ferr := c.synack, c.err
		c.mu.Unlock()
		if ferr != nil {
			return ferr
		}
		if s != nil {
			// The SYN's send record may still be due: the poller takes it.
			return c.connect(ctx, *s)
		}
	}
}

func portsOf(uctx *urma.Context) (provider.Ports, error) {
	p, ok := uctx.Raw().(provider.Ports)
	if !ok {
		return nil, provider.Errorf(urma.ErrNotSupported, "provider %s has no ports", uctx.Device().Provider())
	}
	return p, nil
}
