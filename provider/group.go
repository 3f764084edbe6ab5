package provider

import (
	"context"
	"fmt"
)

// GroupPolicy is how a jetty group picks the member a message goes to,
// with the values of urma_jetty_grp_policy_t.
type GroupPolicy uint8

// Jetty group policies.
const (
	// GroupPolicyRR takes the members in turn (URMA_JETTY_GRP_POLICY_RR).
	GroupPolicyRR GroupPolicy = 0
	// GroupPolicyHashHint takes the member a request's hint hashes to
	// (URMA_JETTY_GRP_POLICY_HASH_HINT).
	GroupPolicyHashHint GroupPolicy = 1
)

// String returns "RR" or "HASH_HINT".
func (p GroupPolicy) String() string {
	switch p {
	case GroupPolicyRR:
		return "RR"
	case GroupPolicyHashHint:
		return "HASH_HINT"
	}
	return fmt.Sprintf("GroupPolicy(%d)", uint8(p))
}

// MaxJettiesInGroup is URMA_MAX_JETTY_IN_JETTY_GRP, the most members any
// device allows a group.
const MaxJettiesInGroup = 32

// JettyGroupConfig configures a jetty group (urma_jetty_grp_cfg_t). Its
// members' receive queues must be RM and have the group's token policy and
// token.
type JettyGroupConfig struct {
	Name        string
	Policy      GroupPolicy
	TokenPolicy TokenPolicy
	Token       uint32
	// Owner is what async events of the group carry (AsyncEvent.Object).
	Owner any
}

// JettyGroup is a group of Jetties of one context that peers address as
// one target (urma_jetty_grp_t). A Jetty joins it at creation
// (JettyConfig.Group) and leaves it when closed.
type JettyGroup interface {
	// Desc names the group: Kind KindJettyGroup, mode RM.
	Desc() JettyDesc
	// Members lists the ids of the member Jetties in the order they joined.
	Members() []uint32
	// Close deletes the group; it fails with ErrBusy while it has members,
	// as urma_delete_jetty_grp does.
	Close() error
}

// GroupContext is implemented by a Context whose provider offers jetty
// groups; the SDK refuses groups with ErrNotSupported on others.
type GroupContext interface {
	NewJettyGroup(cfg JettyGroupConfig) (JettyGroup, error)
	// ImportJettyGroup asks the group's owner for its members, checking
	// the token, and imports each of them into this context. ctx bounds
	// the exchange, as for Import.
	ImportJettyGroup(ctx context.Context, desc JettyDesc, token uint32) (GroupMembers, error)
}

// GroupMembers is what ImportJettyGroup returns: the group's policy and its
// members, imported, in the order they joined.
type GroupMembers struct {
	Policy  GroupPolicy
	Members []Remote
}

// GroupRemote is implemented by a Remote that stands for an imported jetty
// group. A provider sends a request whose target is one to the member
// Pick returns for the request's hint.
type GroupRemote interface {
	Remote
	// Pick returns the member the next request with hint goes to, nil
	// when the group has none.
	Pick(hint uint8) Remote
}

// PickMember resolves a request's target: a GroupRemote's member for hint,
// or p itself. Providers call it where a target is not one of their own
// remotes, so that requests to a single Jetty pay nothing for groups.
func PickMember(p Remote, hint uint8) (Remote, error) {
	g, ok := p.(GroupRemote)
	if !ok {
		return p, nil
	}
	m := g.Pick(hint)
	if m == nil {
		return nil, Errorf(ErrNotFound, "jetty group %v has no members", g.Desc().ID)
	}
	return m, nil
}
