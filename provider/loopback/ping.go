package loopback

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
)

// A ping is a request on the control connection that the peer context's
// server answers with the same bytes: every context answers, so nothing
// runs on the peer's side for it. The connection is the one imports use,
// with its checks: the peer must be a process of this user (SO_PEERCRED
// both ways), and the server reads at most wire.MaxPing bytes of it.

var _ provider.Pinger = (*lbContext)(nil)

// Ping implements provider.Pinger. A uasid of 0 pings a context at dst
// other than c, in this process or another of this host's (the first,
// by UASID, that answers).
func (c *lbContext) Ping(ctx context.Context, dst provider.EID, uasid uint32, payload []byte) error {
	if err := c.check(); err != nil {
		return err
	}
	if len(payload) > wire.MaxPing {
		return provider.Errorf(provider.ErrInvalid, "ping payload of %d bytes: loopback carries at most %d", len(payload), wire.MaxPing)
	}
	if err := provider.ContextErr(ctx); err != nil {
		return err
	}
	if uasid != 0 {
		return c.pingOne(ctx, dst, uasid, payload)
	}
	uasids := c.contextsAt(dst)
	if len(uasids) == 0 {
		return provider.Errorf(provider.ErrNotFound, "no context at eid %v on this host (in %s)", dst, c.dir)
	}
	var err error
	for _, u := range uasids {
		// A context that is gone left its socket behind: try the next.
		if err = c.pingOne(ctx, dst, u, payload); !errors.Is(err, provider.ErrNotFound) {
			return err
		}
	}
	return err
}

func (c *lbContext) pingOne(ctx context.Context, dst provider.EID, uasid uint32, payload []byte) error {
	p, err := c.peer(ctx, dst, uasid)
	if err != nil {
		return err
	}
	m, err := p.rpc(ctx, wire.Ping, payload, 0)
	if err != nil {
		return err
	}
	m.CloseFDs()
	if !bytes.Equal(m.Payload, payload) {
		return provider.Errorf(provider.ErrFail, "peer process %d answered a ping of %d bytes with %d other bytes", p.pid, len(payload), len(m.Payload))
	}
	return nil
}

// contextsAt returns the UASIDs of the contexts at eid that have a socket
// in the runtime directory, c's own left out, in increasing order.
func (c *lbContext) contextsAt(eid provider.EID) []uint32 {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return nil
	}
	prefix := strings.ReplaceAll(netip.AddrFrom16(eid).Unmap().String(), ":", "_") + "-"
	var out []uint32
	for _, e := range ents {
		hex, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		hex, ok = strings.CutSuffix(hex, sockSuffix)
		u, err := strconv.ParseUint(hex, 16, 32)
		if !ok || err != nil || len(hex) != 8 || u == 0 || (eid == c.eid && uint32(u) == c.uasid) {
			continue
		}
		out = append(out, uint32(u))
	}
	slices.Sort(out)
	return out
}

// MaxPingPayload implements provider.Pinger.
func (c *lbContext) MaxPingPayload() int { return wire.MaxPing }

// ListenPing implements provider.Pinger: every loopback context answers
// pings to its EID already.
func (c *lbContext) ListenPing() (io.Closer, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return nopCloser{}, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
