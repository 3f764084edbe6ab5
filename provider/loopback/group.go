package loopback

import (
	"context"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/jgroup"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
)

// maxGroupMembers is the device's max_jetty_in_jetty_grp.
const maxGroupMembers = provider.MaxJettiesInGroup

func (c *lbContext) NewJettyGroup(cfg provider.JettyGroupConfig) (provider.JettyGroup, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.groups.New(c.eid, c.uasid, cfg, maxGroupMembers)
}

// ImportJettyGroup asks the group's owner, in this process or through its
// control socket (wire.ImportGroup), for the members, and imports each as
// Import would.
func (c *lbContext) ImportJettyGroup(ctx context.Context, desc provider.JettyDesc, token uint32) (provider.GroupMembers, error) {
	if err := c.check(); err != nil {
		return provider.GroupMembers{}, err
	}
	if err := desc.Validate(); err != nil {
		return provider.GroupMembers{}, err
	}
	if desc.Kind != provider.KindJettyGroup {
		return provider.GroupMembers{}, provider.Errorf(provider.ErrInvalid, "descriptor names a %v, not a jetty group", desc.Kind)
	}
	var policy provider.GroupPolicy
	var ids []uint32
	var err error
	if owner := fabricFind(desc.ID.EID, desc.ID.UASID); owner != nil {
		policy, ids, err = owner.groups.Lookup(desc.ID.ID, desc.TokenPolicy, token)
	} else {
		policy, ids, err = c.peerGroup(ctx, desc, token)
	}
	if err != nil {
		return provider.GroupMembers{}, err
	}
	gm := provider.GroupMembers{Policy: policy}
	for _, id := range ids {
		r, err := c.Import(ctx, jgroup.MemberDesc(desc, id), token)
		if err != nil {
			if provider.StatusOf(err) == provider.StatusOf(provider.ErrNotFound) {
				continue // it left the group since Lookup
			}
			for _, m := range gm.Members {
				_ = m.Close()
			}
			return provider.GroupMembers{}, err
		}
		gm.Members = append(gm.Members, r)
	}
	return gm, nil
}

// joinGroup adds the new Jetty j to the group of its configuration.
func (c *lbContext) joinGroup(j *jettyObj, jg provider.JettyGroup, token uint32) error {
	g, err := c.groups.Of(jg)
	if err != nil {
		return err
	}
	if err := g.Join(j.id, j.mode, j.ep.desc.TokenPolicy, token); err != nil {
		return err
	}
	j.group = g
	return nil
}

// peerGroup asks the process that owns the group desc names for its
// policy and members.
func (c *lbContext) peerGroup(ctx context.Context, desc provider.JettyDesc, token uint32) (provider.GroupPolicy, []uint32, error) {
	p, err := c.peer(ctx, desc.ID.EID, desc.ID.UASID)
	if err != nil {
		return 0, nil, err
	}
	b, _ := desc.MarshalBinary()
	m, err := p.rpc(ctx, wire.ImportGroup, (&wire.Buf{Bytes: b}).U32(token).Bytes, 0)
	if err != nil {
		return 0, nil, err
	}
	w := wire.Buf{Bytes: m.Payload}
	policy, n := provider.GroupPolicy(w.GetU32()), w.GetU32()
	if w.Short || policy > provider.GroupPolicyHashHint || n > maxGroupMembers || len(w.Bytes) != 4*int(n) {
		return 0, nil, provider.Errorf(provider.ErrFail, "peer %d sent a malformed jetty group reply", p.pid)
	}
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = w.GetU32()
	}
	return policy, ids, nil
}
