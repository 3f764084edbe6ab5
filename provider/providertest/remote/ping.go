package remote

import (
	"context"
	"io"
	"time"

	"github.com/urma-go/sdk/provider"
)

// The proxy forwards a context's urma pings to the peer's context, so
// that the conformance suite's ping cases run on it too.

var _ provider.Pinger = (*pContext)(nil)

type contextPingArgs struct {
	H       uint64
	EID     provider.EID
	UASID   uint32
	Payload []byte
	// Timeout is what was left of the caller's deadline; 0 for none.
	Timeout time.Duration
}

func init() {
	serve(rpcContextPing, (*session).contextPing)
	serve(rpcMaxPing, (*session).maxPing)
}

func (c *pContext) Ping(ctx context.Context, dst provider.EID, uasid uint32, payload []byte) error {
	if err := provider.ContextErr(ctx); err != nil {
		return err
	}
	a := &contextPingArgs{H: c.h, EID: dst, UASID: uasid, Payload: payload}
	if d, ok := ctx.Deadline(); ok {
		a.Timeout = max(time.Until(d), time.Nanosecond)
	}
	_, err := rpcContextPing.call(c.p.c, a)
	return err
}

func (c *pContext) MaxPingPayload() int {
	r, err := rpcMaxPing.call(c.p.c, &hArgs{H: c.h})
	if err != nil {
		return 0
	}
	return r.N
}

// ListenPing is not forwarded: the peer's Closer would have to live in
// its object table.
func (c *pContext) ListenPing() (io.Closer, error) {
	return nil, provider.Errorf(provider.ErrNotSupported, "the remote proxy does not forward ListenPing")
}

func (s *session) contextPing(a *contextPingArgs) (*empty, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	p, ok := c.(provider.Pinger)
	if !ok {
		return nil, provider.Errorf(provider.ErrNotSupported, "the peer's provider has no ping")
	}
	ctx := context.Background()
	if a.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.Timeout)
		defer cancel()
	}
	return nil, p.Ping(ctx, a.EID, a.UASID, a.Payload)
}

func (s *session) maxPing(a *hArgs) (*countReply, error) {
	c, err := s.ctx(a.H)
	if err != nil {
		return nil, err
	}
	p, ok := c.(provider.Pinger)
	if !ok {
		return &countReply{}, nil
	}
	return &countReply{N: p.MaxPingPayload()}, nil
}
