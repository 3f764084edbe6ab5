// Package jgroup is the owner's side of jetty groups, shared by the
// providers: a context's table of groups, the rules a Jetty meets to join
// one (RM, the group's token policy and token, a bounded member count) and
// the answer to a peer's import, which names the members.
//
// The member a message goes to is chosen by the importer (see
// provider.PickMember), from the members the owner named at import: a
// verbs connection ends at one queue pair, so no receiver could choose
// after the fact without copying every message.
package jgroup

import (
	"slices"
	"sync"

	"github.com/urma-go/sdk/provider"
)

// MaxName is URMA_MAX_NAME, the longest group name with its terminator.
const MaxName = 64

// Table is a context's jetty groups. The zero value is empty, with room
// for MaxGroups groups.
type Table struct {
	mu     sync.Mutex
	next   uint32
	groups map[uint32]*Group
}

// MaxGroups bounds a context's groups.
const MaxGroups = 1024

// Group is one jetty group: a provider.JettyGroup.
type Group struct {
	t    *Table
	desc provider.JettyDesc
	cfg  provider.JettyGroupConfig
	max  int

	mu      sync.Mutex // guards members and closed
	members []uint32
	closed  bool
}

// New creates a group of the context whose Jetties have ids {eid, uasid,
// ...}, with room for maxMembers members.
func (t *Table) New(eid provider.EID, uasid uint32, cfg provider.JettyGroupConfig, maxMembers int) (*Group, error) {
	switch {
	case cfg.Policy > provider.GroupPolicyHashHint:
		return nil, provider.Errorf(provider.ErrInvalid, "jetty group: unknown policy %d", cfg.Policy)
	case cfg.TokenPolicy > provider.TokenAllEncrypted:
		return nil, provider.Errorf(provider.ErrInvalid, "jetty group: unknown token policy %d", cfg.TokenPolicy)
	case len(cfg.Name) >= MaxName:
		return nil, provider.Errorf(provider.ErrInvalid, "jetty group: name of %d bytes, at most %d", len(cfg.Name), MaxName-1)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.groups) >= MaxGroups {
		return nil, provider.Errorf(provider.ErrAgain, "jetty group: the context has %d groups, the most it may", MaxGroups)
	}
	if t.groups == nil {
		t.groups = make(map[uint32]*Group)
	}
	for {
		t.next++
		if t.next != 0 && t.groups[t.next] == nil {
			break
		}
	}
	g := &Group{t: t, cfg: cfg, max: maxMembers, desc: provider.JettyDesc{
		ID:   provider.JettyID{EID: eid, UASID: uasid, ID: t.next},
		Kind: provider.KindJettyGroup, Mode: provider.RM, TokenPolicy: cfg.TokenPolicy,
	}}
	t.groups[t.next] = g
	return g, nil
}

// Desc names the group.
func (g *Group) Desc() provider.JettyDesc { return g.desc }

// Members lists the member ids in joining order.
func (g *Group) Members() []uint32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.members)
}

// Owner is what the group's async events carry.
func (g *Group) Owner() any { return g.cfg.Owner }

// Close deletes the group: refused with ErrBusy while Jetties are members,
// as urma_delete_jetty_grp refuses.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return provider.Errorf(provider.ErrClosed, "jetty group is closed")
	}
	if n := len(g.members); n > 0 {
		return provider.Errorf(provider.ErrBusy, "jetty group has %d member jetties: close them first", n)
	}
	g.closed = true
	g.t.mu.Lock()
	delete(g.t.groups, g.desc.ID.ID)
	g.t.mu.Unlock()
	return nil
}

// Of returns the group jg is when it belongs to t.
func (t *Table) Of(jg provider.JettyGroup) (*Group, error) {
	g, ok := jg.(*Group)
	if !ok || g == nil || g.t != t {
		return nil, provider.Errorf(provider.ErrInvalid, "jetty group of another context or provider")
	}
	return g, nil
}

// Join adds the Jetty id, whose receive queue has mode, token policy and
// token, checking what urma_create_jetty checks of a group's member.
func (g *Group) Join(id uint32, mode provider.TransportMode, policy provider.TokenPolicy, token uint32) error {
	switch {
	case mode != provider.RM:
		return provider.Errorf(provider.ErrInvalid, "a jetty group's members are RM, not %v", mode)
	case policy != g.cfg.TokenPolicy || token != g.cfg.Token:
		return provider.Errorf(provider.ErrInvalid, "a jetty group's members receive with the group's token policy and token")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return provider.Errorf(provider.ErrClosed, "jetty group is closed")
	}
	if len(g.members) >= g.max {
		return provider.Errorf(provider.ErrAgain, "jetty group has %d members, the most the device allows", g.max)
	}
	g.members = append(g.members, id)
	return nil
}

// Leave removes the Jetty id; peers that import the group later do not
// see it.
func (g *Group) Leave(id uint32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := slices.Index(g.members, id); i >= 0 {
		g.members = slices.Delete(g.members, i, i+1)
	}
}

// Lookup answers a peer's import of group id presented with the token
// policy and token: the group's policy and member ids.
func (t *Table) Lookup(id uint32, policy provider.TokenPolicy, token uint32) (provider.GroupPolicy, []uint32, error) {
	t.mu.Lock()
	g := t.groups[id]
	t.mu.Unlock()
	if g == nil {
		return 0, nil, provider.Errorf(provider.ErrNotFound, "no jetty group with id %d", id)
	}
	switch {
	case policy != g.cfg.TokenPolicy:
		return 0, nil, provider.Errorf(provider.ErrInvalid, "descriptor does not match jetty group %d", id)
	case g.cfg.TokenPolicy != provider.TokenNone && token != g.cfg.Token:
		return 0, nil, provider.Errorf(provider.ErrPermission, "wrong token for jetty group %d", id)
	}
	return g.cfg.Policy, g.Members(), nil
}

// MemberDesc is the descriptor of member id of the group desc names.
func MemberDesc(group provider.JettyDesc, id uint32) provider.JettyDesc {
	d := group
	d.Kind, d.ID.ID = provider.KindJetty, id
	return d
}
