package urma

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/urma-go/sdk/provider"
)

// PingOptions configures Context.Ping. A nil *PingOptions, like the zero
// value, pings the EID's responder with an empty payload.
type PingOptions struct {
	// UASID names the context at the EID to ping. 0 addresses the EID
	// alone, and the provider picks who answers: on loopback, any other
	// context of this host at that EID; on ib, the context of the peer
	// host that called ListenPing on it.
	UASID uint32
	// Size is the number of random bytes the ping carries and the peer
	// must send back, at most MaxPingSize.
	Size int
}

// Ping measures a round trip to the context at dst: the request goes to the
// peer's provider, which answers it without the peer's application taking
// part, and the time from sending to the matching reply is returned.
// On loopback the peer's control server answers (any live context
// does), and the first ping to a peer includes connecting to it; on ib the peer context's rdma_cm listener answers with a reject
// carrying the echo, so the time includes the address and route
// resolution of a connection request. A provider without pings gives
// ErrNotSupported; a deadline of ctx gives an error matching
// context.DeadlineExceeded and ErrTimeout; a peer nobody has gives
// ErrNotFound.
func (c *Context) Ping(ctx context.Context, dst EID, opts *PingOptions) (time.Duration, error) {
	p, err := c.pinger("ping")
	if err != nil {
		return 0, err
	}
	var o PingOptions
	if opts != nil {
		o = *opts
	}
	obj := dst.String()
	if o.UASID != 0 {
		obj = fmt.Sprintf("%v uasid %d", dst, o.UASID)
	}
	if max := p.MaxPingPayload(); o.Size < 0 || o.Size > max {
		return 0, &OpError{Op: "ping", Obj: obj,
			Err: provider.Errorf(ErrInvalid, "size %d out of range [0,%d] for %s", o.Size, max, c.dev)}
	}
	payload := make([]byte, o.Size)
	for i := range payload {
		payload[i] = byte(rand.Uint32())
	}
	start := time.Now()
	if err := p.Ping(ctx, provider.EID(dst), o.UASID, payload); err != nil {
		return 0, &OpError{Op: "ping", Obj: obj, Err: err}
	}
	return time.Since(start), nil
}

// MaxPingSize is the largest PingOptions.Size the context's provider
// carries, 0 when it has no pings.
func (c *Context) MaxPingSize() int {
	p, err := c.pinger("ping")
	if err != nil {
		return 0
	}
	return p.MaxPingPayload()
}

// ListenPing makes the context answer pings addressed to its EID alone
// (PingOptions.UASID 0) until the returned Closer is closed. A loopback
// context answers them without it; an ib context listens on the
// provider's ping port (ib.PingPort), which one process of a host at a
// time can do (ErrExist for the others). Pings that name the context's
// UASID are answered whether or not it listens.
func (c *Context) ListenPing() (io.Closer, error) {
	p, err := c.pinger("ping listen")
	if err != nil {
		return nil, err
	}
	l, err := p.ListenPing()
	if err != nil {
		return nil, &OpError{Op: "ping listen", Obj: c.EID().String(), Err: err}
	}
	return l, nil
}

func (c *Context) pinger(op string) (provider.Pinger, error) {
	if c == nil {
		return nil, &OpError{Op: op, Err: provider.Errorf(ErrInvalid, "nil context")}
	}
	p, ok := c.p.(provider.Pinger)
	if !ok {
		return nil, &OpError{Op: op, Obj: c.dev.String(), Err: provider.Errorf(ErrNotSupported, "provider %s has no ping", c.dev.Provider())}
	}
	return p, nil
}
