package providertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

var groupTests = []test{
	{"round robin spreads sends evenly", testGroupRoundRobin},
	{"hash hint sticks to one member", testGroupHashHint},
	{"wrong token refused", testGroupWrongToken},
	{"removed member no longer chosen", testGroupRemovedMember},
	{"descriptor round trip and delete", testGroupDescriptor},
	{"member rules", testGroupMemberRules},
	{"prepared send picks at each post", testGroupPrepared},
}

const groupToken = 0x5eed_0001

// group is a jetty group on the target side with its members, each with
// a JFC of its own, and the group imported on the initiator side.
type group struct {
	g       *jetty.JettyGroup
	members []*jetty.Jetty
	jfcs    []*jetty.JFC
	bufs    []*segment.Segment
	remote  *jetty.Remote
}

// groups reports whether the target's device offers jetty groups; when it
// does not, it checks that NewJettyGroup refuses them as the attributes
// say.
func (e *env) groups(t *testing.T) bool {
	if a := e.b.Device().Attr(); a.MaxJettyGroups > 0 {
		require.GreaterOrEqual(t, a.MaxJettiesInGroup, 4, "MaxJettiesInGroup")
		return true
	}
	_, err := jetty.NewJettyGroup(e.b, jetty.JettyGroupConfig{})
	require.ErrorIs(t, err, urma.ErrNotSupported, "NewJettyGroup on a device with MaxJettyGroups 0")
	return false
}

// member makes an RM Jetty on the target side that joins g, with recvs
// 64-byte receives posted.
func (e *env) member(t *testing.T, g *jetty.JettyGroup, recvs int) (*jetty.Jetty, *jetty.JFC, *segment.Segment) {
	jfc := e.jfc(e.b, 0)
	j, err := jetty.NewJetty(e.b, jetty.JettyConfig{
		Send:  jetty.JFSConfig{Mode: urma.RM, JFC: jfc},
		Recv:  jetty.JFRConfig{TokenPolicy: segment.TokenPlainText, Token: groupToken},
		Group: g,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	buf := e.seg(e.b, uint64(64*max(recvs, 1)), segment.Read|segment.Write)
	for i := range recvs {
		require.NoError(t, j.PostRecv([]jetty.RecvWR{{UserCtx: uint64(i), Local: []segment.SGE{buf.SGE(uint64(64*i), 64)}}}))
	}
	return j, jfc, buf
}

// newGroup makes a group of n members with recvs receives each and
// imports it on the initiator side.
func (e *env) newGroup(t *testing.T, policy jetty.GroupPolicy, n, recvs int) *group {
	g, err := jetty.NewJettyGroup(e.b, jetty.JettyGroupConfig{Name: "workers", Policy: policy,
		TokenPolicy: segment.TokenPlainText, Token: groupToken})
	require.NoError(t, err)
	gr := &group{g: g}
	for range n {
		j, jfc, buf := e.member(t, g, recvs)
		gr.members = append(gr.members, j)
		gr.jfcs = append(gr.jfcs, jfc)
		gr.bufs = append(gr.bufs, buf)
	}
	// The group goes after its members, which t.Cleanup closes first.
	t.Cleanup(func() { _ = g.Close() })
	gr.remote, err = jetty.ImportJetty(t.Context(), e.a, g.Descriptor(), groupToken)
	require.NoError(t, err)
	t.Cleanup(func() { _ = gr.remote.Close() })
	return gr
}

// sendAll posts one signaled SEND per hint to r, each carrying its index
// in its first byte, and checks the send-side records: each names the
// member the request went to, which it returns.
func (e *env) sendAll(t *testing.T, s sendSide, r *jetty.Remote, hints []uint8) []urma.JettyID {
	src := e.seg(e.a, uint64(len(hints)), segment.Read|segment.Write)
	for i := range hints {
		src.Bytes()[i] = byte(i)
		require.NoError(t, s.jfs.Post([]jetty.WR{{Opcode: urma.OpSend, Hint: hints[i], Flags: jetty.Signaled, To: r,
			UserCtx: uint64(i), Local: []segment.SGE{src.SGE(uint64(i), 1)}}}))
	}
	to := make([]urma.JettyID, len(hints))
	for _, cr := range e.poll(s.jfc, len(hints)) {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
		to[cr.UserCtx] = cr.RemoteID
	}
	return to
}

// received polls member i of gr for n records and returns the indexes the
// messages carried.
func (e *env) received(t *testing.T, gr *group, i, n int) []int {
	var got []int
	for _, cr := range e.poll(gr.jfcs[i], n) {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
		require.Equal(t, gr.members[i].Descriptor().ID.ID, cr.LocalID, "%v", cr)
		require.Equal(t, uint32(1), cr.Len)
		got = append(got, int(gr.bufs[i].Bytes()[64*cr.UserCtx]))
	}
	return got
}

func (e *env) groupSender(t *testing.T, r *jetty.Remote) sendSide {
	s := e.sender(jetty.JFSConfig{Mode: urma.RM})
	require.NoError(t, s.jfs.Advise(t.Context(), r))
	return s
}

// Round robin: 3k SENDs from one queue to a group of 3 land k on each
// member, in turn.
func testGroupRoundRobin(t *testing.T, e *env) {
	if !e.groups(t) {
		return
	}
	const n, k = 3, 4
	gr := e.newGroup(t, jetty.GroupPolicyRR, n, k)
	require.Len(t, gr.remote.Members(), n)
	require.Equal(t, jetty.KindJettyGroup, gr.remote.Descriptor().Kind)
	s := e.groupSender(t, gr.remote)
	to := e.sendAll(t, s, gr.remote, make([]uint8, n*k))
	for i := range to {
		require.Equal(t, to[i%n], to[i], "request %d went out of turn", i)
	}
	for i := range n {
		require.Equal(t, gr.members[i].Descriptor().ID, to[i], "turn %d", i)
		require.Len(t, e.received(t, gr, i, k), k, "member %d", i)
	}
	for i := range n {
		e.none(gr.jfcs[i])
	}
}

// Hash hint: every request with the same hint goes to the same member,
// and different hints reach different members.
func testGroupHashHint(t *testing.T, e *env) {
	if !e.groups(t) {
		return
	}
	const n = 3
	hints := []uint8{7, 7, 1, 7, 2, 1, 7, 2, 200, 200}
	gr := e.newGroup(t, jetty.GroupPolicyHashHint, n, len(hints))
	s := e.groupSender(t, gr.remote)
	to := e.sendAll(t, s, gr.remote, hints)
	memberOf := map[uint8]urma.JettyID{}
	used := map[urma.JettyID]int{}
	for i, h := range hints {
		if m, ok := memberOf[h]; ok {
			require.Equal(t, m, to[i], "hint %d moved to another member", h)
		}
		memberOf[h] = to[i]
		used[to[i]]++
	}
	require.GreaterOrEqual(t, len(used), 2, "hints 1, 2, 7 and 200 all went to one member")
	for i := range n {
		got := e.received(t, gr, i, used[gr.members[i].Descriptor().ID])
		for _, x := range got {
			require.Equal(t, gr.members[i].Descriptor().ID, memberOf[hints[x]], "message %d", x)
		}
	}
}

// The group's owner checks the token at import.
func testGroupWrongToken(t *testing.T, e *env) {
	if !e.groups(t) {
		return
	}
	gr := e.newGroup(t, jetty.GroupPolicyRR, 1, 0)
	_, err := jetty.ImportJetty(t.Context(), e.a, gr.g.Descriptor(), groupToken+1)
	require.ErrorIs(t, err, urma.ErrPermission)
	d := gr.g.Descriptor()
	d.TokenPolicy = segment.TokenNone
	_, err = jetty.ImportJetty(t.Context(), e.a, d, 0)
	require.Error(t, err, "an import that claims no token policy")
}

// A member that left the group is not picked once the importer refreshes,
// and the others share the turns.
func testGroupRemovedMember(t *testing.T, e *env) {
	if !e.groups(t) {
		return
	}
	const k = 3
	gr := e.newGroup(t, jetty.GroupPolicyRR, 3, 2*k)
	gone := gr.members[1].Descriptor().ID
	require.NoError(t, gr.members[1].Close())
	require.Len(t, gr.g.Members(), 2)
	require.NotContains(t, gr.g.Members(), gone)
	require.NoError(t, gr.remote.Refresh(t.Context()))
	require.Equal(t, gr.g.Members(), gr.remote.Members())
	s := e.groupSender(t, gr.remote)
	to := e.sendAll(t, s, gr.remote, make([]uint8, 2*k))
	for _, id := range to {
		require.NotEqual(t, gone, id, "a removed member was picked")
	}
	require.Len(t, e.received(t, gr, 0, k), k)
	require.Len(t, e.received(t, gr, 2, k), k)
	// A Jetty that joins later is picked after a refresh.
	j, jfc, buf := e.member(t, gr.g, k)
	gr.members, gr.jfcs, gr.bufs = append(gr.members, j), append(gr.jfcs, jfc), append(gr.bufs, buf)
	require.NoError(t, gr.remote.Refresh(t.Context()))
	require.Len(t, gr.remote.Members(), 3)
	e.sendAll(t, s, gr.remote, make([]uint8, 3*k))
	for _, i := range []int{0, 2, 3} {
		require.Len(t, e.received(t, gr, i, k), k, "member %d", i)
	}
}

// A group's descriptor marshals and comes back equal and importable; the
// group cannot be deleted while it has members, and Close is idempotent.
func testGroupDescriptor(t *testing.T, e *env) {
	if !e.groups(t) {
		return
	}
	gr := e.newGroup(t, jetty.GroupPolicyRR, 2, 1)
	d := gr.g.Descriptor()
	require.Equal(t, jetty.KindJettyGroup, d.Kind)
	require.Equal(t, urma.RM, d.Mode)
	require.Equal(t, e.b.EID(), d.ID.EID)
	b, err := d.MarshalBinary()
	require.NoError(t, err)
	var back jetty.Descriptor
	require.NoError(t, back.UnmarshalBinary(b))
	require.Equal(t, d, back)
	r, err := jetty.ImportJetty(t.Context(), e.a, back, groupToken)
	require.NoError(t, err)
	require.Equal(t, gr.g.Members(), r.Members())
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "a second Close")
	_, err = jetty.ImportJFR(t.Context(), e.a, back, groupToken)
	require.ErrorIs(t, err, urma.ErrInvalid, "ImportJFR of a group")

	require.ErrorIs(t, gr.g.Close(), urma.ErrBusy, "delete with members")
	for _, j := range gr.members {
		require.NoError(t, j.Close())
	}
	require.NoError(t, gr.g.Close())
	require.NoError(t, gr.g.Close(), "a second Close")
	_, err = jetty.ImportJetty(t.Context(), e.a, d, groupToken)
	require.ErrorIs(t, err, urma.ErrNotFound, "import of a deleted group")
	require.ErrorIs(t, gr.remote.Refresh(t.Context()), urma.ErrNotFound, "refresh of a deleted group")
}

// A member is RM and receives with the group's token; a group of another
// context is refused.
func testGroupMemberRules(t *testing.T, e *env) {
	if !e.groups(t) {
		return
	}
	g, err := jetty.NewJettyGroup(e.b, jetty.JettyGroupConfig{TokenPolicy: segment.TokenPlainText, Token: groupToken})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	jfc := e.jfc(e.b, 0)
	for name, cfg := range map[string]jetty.JettyConfig{
		"RC":              {Send: jetty.JFSConfig{Mode: urma.RC, JFC: jfc}, Recv: jetty.JFRConfig{TokenPolicy: segment.TokenPlainText, Token: groupToken}},
		"another token":   {Send: jetty.JFSConfig{Mode: urma.RM, JFC: jfc}, Recv: jetty.JFRConfig{TokenPolicy: segment.TokenPlainText, Token: groupToken + 1}},
		"no token policy": {Send: jetty.JFSConfig{Mode: urma.RM, JFC: jfc}},
	} {
		if name == "RC" && !e.attr.SupportsMode(urma.RC) {
			continue
		}
		cfg.Group = g
		_, err := jetty.NewJetty(e.b, cfg)
		require.ErrorIs(t, err, urma.ErrInvalid, name)
	}
	cfg := jetty.JettyConfig{Send: jetty.JFSConfig{Mode: urma.RM, JFC: e.jfc(e.a, 0)},
		Recv: jetty.JFRConfig{TokenPolicy: segment.TokenPlainText, Token: groupToken}, Group: g}
	_, err = jetty.NewJetty(e.a, cfg)
	require.ErrorIs(t, err, urma.ErrInvalid, "a group of another context")
	_, err = jetty.NewJettyGroup(e.b, jetty.JettyGroupConfig{Policy: 2})
	require.ErrorIs(t, err, urma.ErrInvalid, "unknown policy")
	require.NoError(t, g.Close())
}

// A prepared SEND to a group picks its member at each post, as Post does.
func testGroupPrepared(t *testing.T, e *env) {
	if !e.groups(t) {
		return
	}
	const n, k = 2, 3
	gr := e.newGroup(t, jetty.GroupPolicyRR, n, k)
	s := e.groupSender(t, gr.remote)
	src := e.seg(e.a, 8, segment.Read|segment.Write)
	p := e.prepare(s, jetty.WR{Opcode: urma.OpSend, Flags: jetty.Signaled, To: gr.remote,
		Local: []segment.SGE{src.SGE(0, 1)}})
	var to []urma.JettyID
	for range n * k {
		require.NoError(t, p.Post())
		to = append(to, e.pollOK(s.jfc).RemoteID)
	}
	// Prepare checked the request against a member, which took a turn.
	for i := n; i < len(to); i++ {
		require.Equal(t, to[i-n], to[i], "post %d went out of turn", i)
	}
	require.NotEqual(t, to[0], to[1])
	for i := range n {
		require.Len(t, e.received(t, gr, i, k), k, "member %d", i)
	}
}
