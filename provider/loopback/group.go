package loopback

import (
	"context"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/jgroup"
)

// maxGroupMembers is the device's max_jetty_in_jetty_grp.
const maxGroupMembers = provider.MaxJettiesInGroup

func (c *lbContext) NewJettyGroup(cfg provider.JettyGroupConfig) (provider.JettyGroup, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.groups.New(c.eid, c.uasid, cfg, maxGroupMembers)
}

// ImportJettyGroup imports a group of a context of this process: its
// members, each as Import would. A group of another process is refused
// with ErrNotSupported: the control protocol between processes has no
// message that lists a group.
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
	owner := fabricFind(desc.ID.EID, desc.ID.UASID)
	if owner == nil {
		return provider.GroupMembers{}, provider.Errorf(provider.ErrNotSupported,
			"loopback imports jetty groups of its own process only; %v is elsewhere", desc.ID)
	}
	policy, ids, err := owner.groups.Lookup(desc.ID.ID, desc.TokenPolicy, token)
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
