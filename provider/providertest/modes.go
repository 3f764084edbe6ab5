package providertest

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

var modeTests = []test{
	{"RM one JFS to many JFRs", testRMFanOut},
	{"RC bind send unbind rebind", testRCBind},
	{"RC bind from both ends at once", testRCBindBothEnds},
	{"RC rules", testRCRules},
	{"UM sends only", testUM},
	{"UM datagram size", testUMSize},
	{"mode mismatch", testModeMismatch},
	{"jetty with shared JFR", testSharedJFR},
}

func testRMFanOut(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{Mode: urma.RM})
	src := e.seg(e.a, 64, segment.LocalOnly)
	fill(src.Bytes(), 1)
	var rs []recvSide
	var bufs []*segment.Segment
	for i := 0; i < 3; i++ {
		r := e.receiver(jetty.JFRConfig{Mode: urma.RM})
		b := e.seg(e.b, 64, segment.LocalOnly)
		require.NoError(t, r.jfr.Recv(b.SGE(0, 64), uint64(i)))
		require.NoError(t, s.jfs.Advise(t.Context(), r.remote))
		rs, bufs = append(rs, r), append(bufs, b)
	}
	for i, r := range rs {
		require.NoError(t, s.jfs.Send(r.remote, src.SGE(uint64(i), 16), 0, uint64(i)))
	}
	sa, err := s.jfs.Query()
	require.NoError(t, err)
	for i, r := range rs {
		checkSendCR(t, e.poll(s.jfc, 1)[0], urma.OpSend, uint64(i), 16, sa, r.jfr.Descriptor().ID)
		checkRecvCR(t, e.poll(r.jfc, 1)[0], urma.OpSend, uint64(i), 16, r.jfr.Descriptor().ID.ID, sa.ID, nil, false)
		require.Equal(t, src.Bytes()[i:i+16], bufs[i].Bytes()[:16])
	}
	require.NoError(t, s.jfs.Unadvise(rs[0].remote))
}

// rcPair makes an RC Jetty on each side, each bound to the other.
func rcPair(t *testing.T, e *env) (ja, jb *jetty.Jetty, jfcA, jfcB *jetty.JFC, ra, rb *jetty.Remote) {
	ja, jb, jfcA, jfcB, ra, rb = rcJetties(t, e)
	require.NoError(t, ja.Bind(t.Context(), rb))
	require.NoError(t, jb.Bind(t.Context(), ra))
	return
}

// rcJetties makes an RC Jetty on each side, each with its JFC, and each
// side's import of the other's, unbound.
func rcJetties(t *testing.T, e *env) (ja, jb *jetty.Jetty, jfcA, jfcB *jetty.JFC, ra, rb *jetty.Remote) {
	jfcA, jfcB = e.jfc(e.a, 0), e.jfc(e.b, 0)
	var err error
	ja, err = jetty.NewJetty(e.a, jetty.JettyConfig{Send: jetty.JFSConfig{Mode: urma.RC, JFC: jfcA}})
	require.NoError(t, err)
	jb, err = jetty.NewJetty(e.b, jetty.JettyConfig{Send: jetty.JFSConfig{Mode: urma.RC, JFC: jfcB}})
	require.NoError(t, err)
	rb, err = jetty.ImportJetty(t.Context(), e.a, jb.Descriptor(), 0)
	require.NoError(t, err)
	ra, err = jetty.ImportJetty(t.Context(), e.b, ja.Descriptor(), 0)
	require.NoError(t, err)
	return
}

func testRCBind(t *testing.T, e *env) {
	if !e.attr.SupportsMode(urma.RC) {
		_, err := jetty.NewJetty(e.a, jetty.JettyConfig{Send: jetty.JFSConfig{Mode: urma.RC, JFC: e.jfc(e.a, 0)}})
		require.ErrorIs(t, err, urma.ErrNotSupported)
		return
	}
	ja, jb, jfcA, jfcB, _, rb := rcPair(t, e)
	la := e.seg(e.a, 64, segment.LocalOnly)
	lb := e.seg(e.b, 64, segment.LocalOnly)
	copy(la.Bytes(), "ping")
	require.NoError(t, jb.Recv(lb.SGE(0, 64), 7))
	require.NoError(t, ja.Send(nil, la.SGE(0, 4), 0, 1))
	aa, err := ja.Query()
	require.NoError(t, err)
	cr := e.poll(jfcA, 1)[0]
	checkSendCR(t, cr, urma.OpSend, 1, 4, aa, jb.Descriptor().ID)
	require.NotZero(t, cr.Flags&jetty.CRJetty, "send record of a jetty: %v", cr)
	checkRecvCR(t, e.poll(jfcB, 1)[0], urma.OpSend, 7, 4, jb.Descriptor().ID.ID, ja.Descriptor().ID, nil, true)
	require.Equal(t, "ping", string(lb.Bytes()[:4]))

	// The bound remote may also be named explicitly.
	require.NoError(t, jb.Recv(lb.SGE(0, 64), 8))
	require.NoError(t, ja.Send(rb, la.SGE(0, 4), 0, 2))
	e.pollOK(jfcA)
	e.pollOK(jfcB)

	require.NoError(t, ja.Unbind())
	err = ja.Send(nil, la.SGE(0, 4), 0, 3)
	require.ErrorIs(t, err, urma.ErrInvalid, "unbound RC jetty must refuse requests")
	require.NoError(t, ja.Bind(t.Context(), rb))
	require.NoError(t, jb.Recv(lb.SGE(0, 64), 9))
	require.NoError(t, ja.Send(nil, la.SGE(0, 4), 0, 4))
	require.Equal(t, uint64(4), e.pollOK(jfcA).UserCtx)
	e.pollOK(jfcB)
}

// testRCBindBothEnds binds two RC Jetties to each other from both ends
// at the same moment, as two processes that start together do, and then
// sends both ways: the two ends must settle on one connection, and every
// request posted right after Bind must complete, on both ends, once.
func testRCBindBothEnds(t *testing.T, e *env) {
	if !e.attr.SupportsMode(urma.RC) {
		t.Skip("device has no RC mode; testRCBind checks the refusal")
	}
	const rounds, msgs = 8, 4
	for round := range rounds {
		ja, jb, jfcA, jfcB, ra, rb := rcJetties(t, e)
		la, lb := e.seg(e.a, 64*msgs, segment.LocalOnly), e.seg(e.b, 64*msgs, segment.LocalOnly)
		for i := range msgs {
			require.NoError(t, ja.Recv(la.SGE(uint64(64*i), 64), uint64(i)))
			require.NoError(t, jb.Recv(lb.SGE(uint64(64*i), 64), uint64(i)))
		}
		var wg sync.WaitGroup
		var errA, errB error
		wg.Add(2)
		go func() { defer wg.Done(); errA = ja.Bind(t.Context(), rb) }()
		go func() { defer wg.Done(); errB = jb.Bind(t.Context(), ra) }()
		wg.Wait()
		require.NoError(t, errA, "round %d: bind a to b", round)
		require.NoError(t, errB, "round %d: bind b to a", round)
		for i := range msgs {
			require.NoError(t, ja.Send(nil, la.SGE(uint64(64*i), 8), 0, uint64(100+i)))
			require.NoError(t, jb.Send(nil, lb.SGE(uint64(64*i), 8), 0, uint64(200+i)))
		}
		for _, side := range []struct {
			jfc  *jetty.JFC
			sent uint64
		}{{jfcA, 100}, {jfcB, 200}} {
			got := map[uint64]int{}
			for _, cr := range e.poll(side.jfc, 2*msgs) {
				require.Equal(t, urma.CRSuccess, cr.Status, "round %d: %v", round, cr)
				got[cr.UserCtx]++
			}
			for i := range uint64(msgs) {
				require.Equal(t, 1, got[side.sent+i], "round %d: send %d: records %v", round, side.sent+i, got)
				require.Equal(t, 1, got[i], "round %d: receive %d: records %v", round, i, got)
			}
		}
		e.none(jfcA)
		e.none(jfcB)
		require.NoError(t, ja.Unbind())
		require.NoError(t, ja.Close())
		require.NoError(t, jb.Close())
	}
}

func testRCRules(t *testing.T, e *env) {
	if !e.attr.SupportsMode(urma.RC) {
		t.Skip("device has no RC mode; testRCBind checks the refusal")
	}
	ja, _, _, _, _, rb := rcPair(t, e)
	require.ErrorIs(t, ja.Bind(t.Context(), rb), urma.ErrExist)
	// A second remote jetty that is not the bound one.
	other, err := jetty.NewJetty(e.b, jetty.JettyConfig{Send: jetty.JFSConfig{Mode: urma.RC, JFC: e.jfc(e.b, 0)}})
	require.NoError(t, err)
	ro, err := jetty.ImportJetty(t.Context(), e.a, other.Descriptor(), 0)
	require.NoError(t, err)
	la := e.seg(e.a, 64, segment.LocalOnly)
	require.ErrorIs(t, ja.Send(ro, la.SGE(0, 4), 0, 1), urma.ErrInvalid)
	// RC is for Jetties only.
	_, err = jetty.NewJFS(e.a, jetty.JFSConfig{Mode: urma.RC, JFC: e.jfc(e.a, 0)})
	require.ErrorIs(t, err, urma.ErrInvalid)
	// Bind needs an RC jetty on both ends.
	rm, err := jetty.NewJetty(e.a, jetty.JettyConfig{Send: jetty.JFSConfig{Mode: urma.RM, JFC: e.jfc(e.a, 0)}})
	require.NoError(t, err)
	require.ErrorIs(t, rm.Bind(t.Context(), ro), urma.ErrInvalid)
	r := e.receiver(jetty.JFRConfig{Mode: urma.RC})
	require.NoError(t, ja.Unbind())
	require.ErrorIs(t, ja.Bind(t.Context(), r.remote), urma.ErrInvalid, "bind to a JFR")
	rmB, err := jetty.NewJetty(e.b, jetty.JettyConfig{Send: jetty.JFSConfig{Mode: urma.RM, JFC: e.jfc(e.b, 0)}})
	require.NoError(t, err)
	rmRemote, err := jetty.ImportJetty(t.Context(), e.a, rmB.Descriptor(), 0)
	require.NoError(t, err)
	require.ErrorIs(t, ja.Bind(t.Context(), rmRemote), urma.ErrInvalid, "bind to an RM jetty")
	require.ErrorIs(t, ja.Send(nil, la.SGE(0, 4), 0, 2), urma.ErrInvalid, "post on an unbound RC jetty")
	require.ErrorIs(t, ja.Advise(t.Context(), ro), urma.ErrInvalid, "an RC jetty binds, it does not advise")
}

func testUM(t *testing.T, e *env) {
	if !e.attr.SupportsMode(urma.UM) {
		_, err := jetty.NewJFS(e.a, jetty.JFSConfig{Mode: urma.UM, JFC: e.jfc(e.a, 0)})
		require.ErrorIs(t, err, urma.ErrNotSupported)
		return
	}
	s := e.sender(jetty.JFSConfig{Mode: urma.UM})
	r := e.receiver(jetty.JFRConfig{Mode: urma.UM})
	l := e.seg(e.a, 64, segment.LocalOnly)
	_, tg := e.remoteSeg(64, rwa)
	for _, op := range []urma.Opcode{urma.OpWrite, urma.OpWriteImm, urma.OpRead, urma.OpCAS, urma.OpFAdd} {
		err := s.jfs.Post([]jetty.WR{{Opcode: op, Flags: jetty.Signaled, To: r.remote,
			Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 8)}})
		require.ErrorIs(t, err, urma.ErrNotSupported, "%v on UM", op)
	}
	rb := e.seg(e.b, 64, segment.LocalOnly)
	require.NoError(t, r.jfr.Recv(rb.SGE(0, 64), 1))
	copy(l.Bytes(), "datagram")
	require.NoError(t, s.jfs.Send(r.remote, l.SGE(0, 8), 0, 2))
	sa, err := s.jfs.Query()
	require.NoError(t, err)
	checkSendCR(t, e.poll(s.jfc, 1)[0], urma.OpSend, 2, 8, sa, r.jfr.Descriptor().ID)
	checkRecvCR(t, e.poll(r.jfc, 1)[0], urma.OpSend, 1, 8, r.jfr.Descriptor().ID.ID, sa.ID, nil, false)
	require.Equal(t, "datagram", string(rb.Bytes()[:8]))
}

// testUMSize sends the largest datagram the device allows and checks that
// one byte more is refused at Post.
func testUMSize(t *testing.T, e *env) {
	if !e.attr.SupportsMode(urma.UM) {
		t.Skip("device has no UM")
	}
	max := e.attr.MaxUMMsgSize
	require.NotZero(t, max, "a device with UM declares MaxUMMsgSize")
	size := min(max, 64<<10)
	s := e.sender(jetty.JFSConfig{Mode: urma.UM})
	r := e.receiver(jetty.JFRConfig{Mode: urma.UM})
	l := e.seg(e.a, size+1, segment.LocalOnly)
	fill(l.Bytes(), 3)
	rb := e.seg(e.b, size+1, segment.LocalOnly)
	require.NoError(t, r.jfr.Recv(rb.SGE(0, uint32(size+1)), 1))
	if max < 1<<31 {
		err := s.jfs.Send(r.remote, l.SGE(0, uint32(max+1)), 0, 1)
		require.ErrorIs(t, err, urma.ErrInvalid, "UM message of MaxUMMsgSize+1 bytes")
	}
	require.NoError(t, s.jfs.Send(r.remote, l.SGE(0, uint32(size)), 0, 2))
	sa, err := s.jfs.Query()
	require.NoError(t, err)
	checkSendCR(t, e.poll(s.jfc, 1)[0], urma.OpSend, 2, uint32(size), sa, r.jfr.Descriptor().ID)
	checkRecvCR(t, e.poll(r.jfc, 1)[0], urma.OpSend, 1, uint32(size), r.jfr.Descriptor().ID.ID, sa.ID, nil, false)
	require.Equal(t, l.Bytes()[:size], rb.Bytes()[:size])
}

func testModeMismatch(t *testing.T, e *env) {
	if !e.attr.SupportsMode(urma.UM) {
		t.Skip("device has only one message mode")
	}
	s := e.sender(jetty.JFSConfig{Mode: urma.RM})
	r := e.receiver(jetty.JFRConfig{Mode: urma.UM})
	l := e.seg(e.a, 64, segment.LocalOnly)
	require.ErrorIs(t, s.jfs.Send(r.remote, l.SGE(0, 8), 0, 1), urma.ErrInvalid)
	require.ErrorIs(t, s.jfs.Advise(t.Context(), r.remote), urma.ErrInvalid, "advise of a UM target on an RM queue")
	e.none(s.jfc)
}

func testSharedJFR(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	jfc := e.jfc(e.b, 0)
	shared, err := jetty.NewJFR(e.b, jetty.JFRConfig{JFC: jfc})
	require.NoError(t, err)
	j1, err := jetty.NewJetty(e.b, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc}, SharedJFR: shared})
	require.NoError(t, err)
	j2, err := jetty.NewJetty(e.b, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc}, SharedJFR: shared})
	require.NoError(t, err)
	r1, err := jetty.ImportJetty(t.Context(), e.a, j1.Descriptor(), 0)
	require.NoError(t, err)
	r2, err := jetty.ImportJetty(t.Context(), e.a, j2.Descriptor(), 0)
	require.NoError(t, err)
	rb := e.seg(e.b, 64, segment.LocalOnly)
	require.NoError(t, shared.Recv(rb.SGE(0, 32), 1))
	require.NoError(t, shared.Recv(rb.SGE(32, 32), 2))
	l := e.seg(e.a, 64, segment.LocalOnly)
	copy(l.Bytes(), "to-j1...to-j2...")
	require.NoError(t, s.jfs.Send(r1, l.SGE(0, 8), 0, 1))
	require.NoError(t, s.jfs.Send(r2, l.SGE(8, 8), 0, 2))
	e.poll(s.jfc, 2)
	crs := e.poll(jfc, 2)
	require.Equal(t, uint64(1), crs[0].UserCtx)
	require.Equal(t, uint64(2), crs[1].UserCtx)
	require.Equal(t, "to-j1...", string(rb.Bytes()[:8]))
	require.Equal(t, "to-j2...", string(rb.Bytes()[32:40]))
	require.ErrorIs(t, shared.Close(), urma.ErrBusy, "JFR shared by jetties")
	require.NoError(t, j1.Close())
	require.NoError(t, j2.Close())
	require.NoError(t, shared.Close())
}
