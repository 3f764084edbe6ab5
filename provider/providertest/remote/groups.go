package remote

import (
	"context"

	"github.com/urma-go/sdk/provider"
)

// Jetty groups: the proxy forwards provider.GroupContext.

var _ provider.GroupContext = (*pContext)(nil)

type groupArgs struct {
	H           uint64
	Name        string
	Policy      uint8
	TokenPolicy uint8
	Token       uint32
	Owner       uint64
}

type groupMembersReply struct{ IDs []uint32 }

type importGroupReply struct {
	Policy  uint8
	Members []remoteReply
}

var (
	rpcNewJettyGroup    = rpc[groupArgs, remoteReply]{opNewJettyGroup}
	rpcGroupMembers     = rpc[hArgs, groupMembersReply]{opGroupMembers}
	rpcImportJettyGroup = rpc[importArgs, importGroupReply]{opImportJettyGroup}
)

func init() {
	serve(rpcNewJettyGroup, (*session).newJettyGroup)
	serve(rpcGroupMembers, (*session).groupMembers)
	serve(rpcImportJettyGroup, (*session).importJettyGroup)
}

// pGroup is the proxy of a jetty group.
type pGroup struct {
	obj
	desc  provider.JettyDesc
	owner uint64
}

func (g *pGroup) Desc() provider.JettyDesc { return g.desc }

func (g *pGroup) Members() []uint32 {
	r, err := rpcGroupMembers.call(g.p.c, &hArgs{H: g.h})
	if err != nil {
		return nil
	}
	return r.IDs
}

func (g *pGroup) Close() error {
	_, err := g.close(g.owner)
	return err
}

func (c *pContext) NewJettyGroup(cfg provider.JettyGroupConfig) (provider.JettyGroup, error) {
	a := &groupArgs{H: c.h, Name: cfg.Name, Policy: uint8(cfg.Policy), TokenPolicy: uint8(cfg.TokenPolicy),
		Token: cfg.Token, Owner: c.p.ownerID(cfg.Owner)}
	r, err := rpcNewJettyGroup.call(c.p.c, a)
	if err != nil {
		c.p.dropOwners(a.Owner)
		return nil, err
	}
	return &pGroup{obj: obj{p: c.p, h: r.H}, desc: provider.JettyDesc(r.Desc), owner: a.Owner}, nil
}

func (c *pContext) ImportJettyGroup(ctx context.Context, desc provider.JettyDesc, token uint32) (provider.GroupMembers, error) {
	if err := provider.ContextErr(ctx); err != nil {
		return provider.GroupMembers{}, err
	}
	r, err := rpcImportJettyGroup.call(c.p.c, &importArgs{H: c.h, Desc: jettyDesc(desc), Token: token})
	if err != nil {
		return provider.GroupMembers{}, err
	}
	gm := provider.GroupMembers{Policy: provider.GroupPolicy(r.Policy)}
	for _, m := range r.Members {
		gm.Members = append(gm.Members, &pRemote{obj: obj{p: c.p, h: m.H}, desc: provider.JettyDesc(m.Desc)})
	}
	return gm, nil
}

func (s *session) groupContext(h uint64) (provider.GroupContext, error) {
	c, err := s.ctx(h)
	if err != nil {
		return nil, err
	}
	gc, ok := c.(provider.GroupContext)
	if !ok {
		return nil, provider.Errorf(provider.ErrNotSupported, "the peer's device has no jetty groups")
	}
	return gc, nil
}

func (s *session) newJettyGroup(a *groupArgs) (*remoteReply, error) {
	gc, err := s.groupContext(a.H)
	if err != nil {
		return nil, err
	}
	g, err := gc.NewJettyGroup(provider.JettyGroupConfig{Name: a.Name, Policy: provider.GroupPolicy(a.Policy),
		TokenPolicy: provider.TokenPolicy(a.TokenPolicy), Token: a.Token, Owner: ownerOf(a.Owner)})
	if err != nil {
		return nil, err
	}
	return &remoteReply{H: s.add(g, a.H), Desc: jettyDesc(g.Desc())}, nil
}

func (s *session) groupMembers(a *hArgs) (*groupMembersReply, error) {
	g, err := get[provider.JettyGroup](s, a.H, "jetty group")
	if err != nil {
		return nil, err
	}
	return &groupMembersReply{IDs: g.Members()}, nil
}

func (s *session) importJettyGroup(a *importArgs) (*importGroupReply, error) {
	gc, err := s.groupContext(a.H)
	if err != nil {
		return nil, err
	}
	gm, err := gc.ImportJettyGroup(context.Background(), provider.JettyDesc(a.Desc), a.Token)
	if err != nil {
		return nil, err
	}
	r := &importGroupReply{Policy: uint8(gm.Policy)}
	for _, m := range gm.Members {
		r.Members = append(r.Members, remoteReply{H: s.add(m, a.H), Desc: jettyDesc(m.Desc())})
	}
	return r, nil
}
