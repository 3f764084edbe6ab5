//go:build cgo && urma_verbs

package ib

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"

	"github.com/urma-go/sdk/provider"
)

// A ping is a connect request with opPing to a context's rdma_cm listener,
// answered as imports are, by a reject carrying the request's nonce and
// payload back: the peer's application takes no part, and nothing is
// kept. A ping naming a UASID goes to that context's listener; a ping to
// an EID alone goes to PingPort, where ListenPing answers.

var _ provider.Pinger = (*ibContext)(nil)

// Ping implements provider.Pinger.
func (c *ibContext) Ping(ctx context.Context, dst provider.EID, uasid uint32, payload []byte) error {
	if c.closed.Load() {
		return errClosed("context")
	}
	if len(payload) > pingEcho {
		return provider.Errorf(provider.ErrInvalid, "ping payload of %d bytes: ib carries at most %d", len(payload), pingEcho)
	}
	port := uasid
	if port == 0 {
		port = PingPort
	}
	nonce := rand.Uint32()
	d, err := c.dial(ctx, dst, port, pingRequest(nonce, c.uasid, payload), c.probeQP)
	if err != nil {
		if uasid == 0 && errors.Is(err, provider.ErrNotFound) && ctx.Err() == nil {
			return provider.Errorf(provider.ErrNotFound, "%v: nothing answers pings to eid %v (its host runs no 'urmactl ping -l' on port %d)", err, dst, PingPort)
		}
		return err
	}
	if !d.id.IsZero() {
		// A listener that is not a urma context's accepted: hang up.
		_ = d.id.Disconnect()
		d.id.DestroyQP()
		_ = d.id.Destroy()
		return provider.Errorf(provider.ErrFail, "the listener at %v port %d is not a urma context's: it accepted a ping", dst, port)
	}
	if err := d.reply.err("ping"); err != nil {
		return err
	}
	if !d.reply.echoes(nonce, payload) {
		return provider.Errorf(provider.ErrFail, "the peer at %v answered a ping with other bytes", dst)
	}
	return nil
}

// MaxPingPayload implements provider.Pinger.
func (c *ibContext) MaxPingPayload() int { return pingEcho }

// ListenPing implements provider.Pinger: a listener on the context's EID
// at PingPort that answers pings and refuses every other request. One
// process of a host at a time can listen there (ErrExist otherwise).
func (c *ibContext) ListenPing() (io.Closer, error) {
	if c.closed.Load() {
		return nil, errClosed("context")
	}
	l, err := listenAnswer(c.eid.addr, PingPort, c.scope(), "rdma_cm pings", func(req request) []byte {
		rep := reply{status: replyNotFound}
		if req.op == opPing {
			rep = pingReply(req)
		}
		return rep.marshal()
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}
