//go:build cgo && urma_verbs

package ib

import (
	"context"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/jgroup"
)

func (c *ibContext) NewJettyGroup(cfg provider.JettyGroupConfig) (provider.JettyGroup, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.groups.New(c.eid.eid, c.uasid, cfg, maxGroupMembers)
}

// ImportJettyGroup asks the group's owner, in one exchange as Import
// does, for the group's policy and member ids, and makes a remote of
// each member: a connection to one presents the group's token again.
func (c *ibContext) ImportJettyGroup(ctx context.Context, desc provider.JettyDesc, token uint32) (provider.GroupMembers, error) {
	if err := c.check(); err != nil {
		return provider.GroupMembers{}, err
	}
	if err := desc.Validate(); err != nil {
		return provider.GroupMembers{}, err
	}
	if desc.Kind != provider.KindJettyGroup {
		return provider.GroupMembers{}, provider.Errorf(provider.ErrInvalid, "descriptor names a %v, not a jetty group", desc.Kind)
	}
	req := request{op: opImportJetty, target: desc.ID.ID, token: token, kind: desc.Kind, mode: desc.Mode,
		policy: desc.TokenPolicy, srcUASID: c.uasid}
	d, err := c.dial(ctx, desc.ID.EID, desc.ID.UASID, req, c.probeQP)
	if err != nil {
		return provider.GroupMembers{}, err
	}
	if err := d.reply.err("import of " + desc.Kind.String()); err != nil {
		return provider.GroupMembers{}, err
	}
	gm := provider.GroupMembers{Policy: d.reply.policy}
	for _, id := range d.reply.members {
		r := &remote{desc: jgroup.MemberDesc(desc, id), token: token, ctx: c}
		c.track(r)
		gm.Members = append(gm.Members, r)
	}
	return gm, nil
}

// answerGroupImport answers the import of a jetty group with its members.
func (c *ibContext) answerGroupImport(r request) (reply, error) {
	if r.mode != provider.RM {
		return reply{}, provider.Errorf(provider.ErrInvalid, "a jetty group is RM, not %v", r.mode)
	}
	policy, ids, err := c.groups.Lookup(r.target, r.policy, r.token)
	if err != nil {
		return reply{}, err
	}
	return reply{policy: policy, members: ids}, nil
}

// joinGroup adds the new Jetty j to the group of its configuration.
func (c *ibContext) joinGroup(j *jetty, jg provider.JettyGroup) error {
	g, err := c.groups.Of(jg)
	if err != nil {
		return err
	}
	if err := g.Join(j.id, j.sq.mode, j.rq.policy, j.rq.token); err != nil {
		return err
	}
	j.group = g
	return nil
}
