package jetty

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// GroupPolicy is how a jetty group picks the member a request goes to,
// with the values of urma_jetty_grp_policy_t.
type GroupPolicy uint8

// Jetty group policies.
const (
	// GroupPolicyRR takes the members in turn (URMA_JETTY_GRP_POLICY_RR).
	GroupPolicyRR GroupPolicy = 0
	// GroupPolicyHashHint sends every request with the same WR.Hint to
	// the same member: member Hint mod n of the n members, in the order
	// they joined (URMA_JETTY_GRP_POLICY_HASH_HINT).
	GroupPolicyHashHint GroupPolicy = 1
)

// String returns "RR" or "HASH_HINT".
func (p GroupPolicy) String() string { return provider.GroupPolicy(p).String() }

// JettyGroupConfig configures a jetty group (urma_jetty_grp_cfg_t). The
// zero value is a round-robin group without a token.
type JettyGroupConfig struct {
	// Name is for people (at most 63 bytes).
	Name   string
	Policy GroupPolicy
	// TokenPolicy and Token protect the group as JFRConfig's protect a
	// JFR: a peer imports the group with the token, and every member
	// receives with this token policy and token.
	TokenPolicy segment.TokenPolicy
	Token       uint32
}

// JettyGroup is a set of RM Jetties of one context that peers address as
// one target (urma_jetty_grp_t): a SEND or SEND_IMM to the imported group
// is delivered to one member, picked by the group's policy, so that a
// server spreads its load over Jetties that each have their own JFC and
// poller.
//
// A Jetty joins the group at creation (JettyConfig.Group) and leaves it
// when it is closed. A peer imports the group with ImportJetty and its
// Descriptor. The importing side picks the member of each request, from
// the members the group had at import (or the last Remote.Refresh): round
// robin over them, or by WR.Hint. One-sided requests (WRITE, READ,
// atomics) to a group go through the member picked the same way, and a
// WRITE_IMM consumes a receive of that member.
//
// A group holds at most urma.DeviceAttr.MaxJettiesInGroup members (32 on
// loopback, 27 on verbs devices, whose import answer lists them).
// docs/semantics.md has the rules.
type JettyGroup struct {
	p      provider.JettyGroup
	ctx    *urma.Context
	closer closer
}

// NewJettyGroup creates a jetty group (urma_create_jetty_grp). It fails
// with urma.ErrNotSupported when the provider has none
// (urma.DeviceAttr.MaxJettyGroups is zero).
func NewJettyGroup(uctx *urma.Context, cfg JettyGroupConfig) (*JettyGroup, error) {
	if uctx == nil {
		return nil, opErr("create jetty group", provider.Errorf(urma.ErrInvalid, "nil context"))
	}
	gc, ok := uctx.Raw().(provider.GroupContext)
	if !ok {
		return nil, opErr("create jetty group", provider.Errorf(urma.ErrNotSupported, "the device has no jetty groups"))
	}
	g := &JettyGroup{ctx: uctx}
	p, err := gc.NewJettyGroup(provider.JettyGroupConfig{Name: cfg.Name, Policy: provider.GroupPolicy(cfg.Policy),
		TokenPolicy: provider.TokenPolicy(cfg.TokenPolicy), Token: cfg.Token, Owner: g})
	if err != nil {
		return nil, opErr("create jetty group", err)
	}
	g.p = p
	return g, nil
}

// Descriptor returns what a peer needs to import the group with
// ImportJetty: Kind KindJettyGroup, mode RM.
func (g *JettyGroup) Descriptor() Descriptor { return DescriptorOf(g.p.Desc()) }

// Members lists the ids of the member Jetties, in the order they joined.
func (g *JettyGroup) Members() []urma.JettyID {
	d := g.p.Desc().ID
	ids := g.p.Members()
	out := make([]urma.JettyID, len(ids))
	for i, id := range ids {
		d.ID = id
		out[i] = urma.JettyIDOf(d)
	}
	return out
}

// Context is the context the group was created in.
func (g *JettyGroup) Context() *urma.Context { return g.ctx }

// Raw returns the provider's group.
func (g *JettyGroup) Raw() provider.JettyGroup { return g.p }

// member is the provider's group for a Jetty of uctx joining it.
func (g *JettyGroup) member(uctx *urma.Context) (provider.JettyGroup, error) {
	if g.ctx != uctx {
		return nil, provider.Errorf(urma.ErrInvalid, "jetty group of another context")
	}
	return g.p, nil
}

// Close deletes the group (urma_delete_jetty_grp). While Jetties are
// members it fails with an error matching urma.ErrBusy and may be retried
// once they are closed. Idempotent and nil-safe.
func (g *JettyGroup) Close() error {
	if g == nil {
		return nil
	}
	return g.closer.close("delete jetty group", g.p.Close)
}

// groupRemote is an imported jetty group: the members the owner named,
// imported, and the turn of round robin. It is the provider.GroupRemote
// that providers resolve each request's member through.
type groupRemote struct {
	desc   provider.JettyDesc
	token  uint32
	gc     provider.GroupContext
	policy provider.GroupPolicy // the owner's, fixed at creation
	// members is replaced whole by Refresh; never nil.
	members atomic.Pointer[[]provider.Remote]
	turn    atomic.Uint32

	mu     sync.Mutex // serializes Refresh and Close
	closed bool
}

// Desc is the group's descriptor.
func (g *groupRemote) Desc() provider.JettyDesc { return g.desc }

// Pick returns the member the next request with hint goes to.
func (g *groupRemote) Pick(hint uint8) provider.Remote {
	ms := *g.members.Load()
	n := uint32(len(ms))
	if n == 0 {
		return nil
	}
	if g.policy == provider.GroupPolicyHashHint {
		return ms[uint32(hint)%n]
	}
	return ms[(g.turn.Add(1)-1)%n]
}

// Close unimports the members.
func (g *groupRemote) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return provider.Errorf(urma.ErrClosed, "jetty group remote is closed")
	}
	g.closed = true
	for _, m := range *g.members.Load() {
		_ = m.Close()
	}
	return nil
}

// refresh asks the owner for the members again: members that left are
// unimported, new ones imported, and the others kept with the paths to
// them.
func (g *groupRemote) refresh(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return provider.Errorf(urma.ErrClosed, "jetty group remote is closed")
	}
	gm, err := g.gc.ImportJettyGroup(ctx, g.desc, g.token)
	if err != nil {
		return err
	}
	old := *g.members.Load()
	next := make([]provider.Remote, 0, len(gm.Members))
	for _, m := range gm.Members {
		id := m.Desc().ID
		if i := slices.IndexFunc(old, func(o provider.Remote) bool { return o.Desc().ID == id }); i >= 0 {
			_ = m.Close()
			next = append(next, old[i])
			continue
		}
		next = append(next, m)
	}
	g.members.Store(&next)
	for _, o := range old {
		if !slices.Contains(next, o) {
			_ = o.Close()
		}
	}
	return nil
}

func importGroup(ctx context.Context, uctx *urma.Context, desc Descriptor, token uint32) (*Remote, error) {
	gc, ok := uctx.Raw().(provider.GroupContext)
	if !ok {
		return nil, provider.Errorf(urma.ErrNotSupported, "the device has no jetty groups")
	}
	gm, err := gc.ImportJettyGroup(ctx, desc.Raw(), token)
	if err != nil {
		return nil, err
	}
	g := &groupRemote{desc: desc.Raw(), token: token, gc: gc, policy: gm.Policy}
	ms := gm.Members
	if ms == nil {
		ms = []provider.Remote{}
	}
	g.members.Store(&ms)
	return &Remote{ref: provider.RemoteRef{Remote: g}}, nil
}

// Refresh asks the owner of an imported jetty group for its members again,
// so that Jetties that left it are no longer picked and those that joined
// are. Requests already posted keep their member; a post running at the
// same moment may still pick one that left, and is refused as a post to
// an unimported remote is. ctx bounds the exchange. It fails with urma.ErrInvalid on a remote that is not a group.
func (r *Remote) Refresh(ctx context.Context) error {
	g, ok := r.ref.Remote.(*groupRemote)
	if !ok {
		return opErr("refresh", provider.Errorf(urma.ErrInvalid, "%v is not a jetty group", r.ref.Remote.Desc()))
	}
	if err := g.refresh(ctx); err != nil {
		return &urma.OpError{Op: "refresh", Obj: g.desc.String(), Err: err}
	}
	return nil
}

// Members lists the ids of an imported jetty group's members as the
// importer knows them (see Refresh); nil for a remote that is not a group.
func (r *Remote) Members() []urma.JettyID {
	g, ok := r.ref.Remote.(*groupRemote)
	if !ok {
		return nil
	}
	ms := *g.members.Load()
	out := make([]urma.JettyID, len(ms))
	for i, m := range ms {
		out[i] = urma.JettyIDOf(m.Desc().ID)
	}
	return out
}

// groupMembers is what Advise and Unadvise apply to for r: its members
// for a group, r itself otherwise.
func groupMembers(r provider.Remote) []provider.Remote {
	if g, ok := r.(*groupRemote); ok {
		return *g.members.Load()
	}
	return []provider.Remote{r}
}
