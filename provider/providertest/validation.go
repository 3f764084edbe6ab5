package providertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

var validationTests = []test{
	{"malformed requests", testMalformed},
	{"partial batch", testPartialBatch},
	{"message size above MaxMsgSize", testMsgTooLarge},
	{"queue limits at creation", testCreateLimits},
}

// postErr posts wrs and returns the *jetty.PostError, failing if there is none.
func postErr(t *testing.T, s *jetty.JFS, wrs []jetty.WR) *jetty.PostError {
	t.Helper()
	err := s.Post(wrs)
	var pe *jetty.PostError
	require.ErrorAs(t, err, &pe)
	return pe
}

// testMalformed checks the post-time refusals of docs/semantics.md that
// need no special device state; none of them may queue anything.
func testMalformed(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{MaxInline: min(16, e.attr.MaxInline)})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	foreign := e.seg(e.b, 64, segment.LocalOnly) // memory of the other context
	dst, tg := e.remoteSeg(64, rwa)
	one := func(wr jetty.WR) []jetty.WR { wr.Flags |= jetty.Signaled; return []jetty.WR{wr} }
	cases := []struct {
		name string
		wr   jetty.WR
	}{
		{"READ with no local SGE", jetty.WR{Opcode: urma.OpRead, To: r.remote, Remote: tg.SGE(0, 8)}},
		{"inline READ", jetty.WR{Opcode: urma.OpRead, Flags: jetty.Inline, To: r.remote, Inline: []byte("12345678"), Remote: tg.SGE(0, 8)}},
		{"inline atomic", jetty.WR{Opcode: urma.OpFAdd, Flags: jetty.Inline, To: r.remote, Inline: make([]byte, 8), Remote: tg.SGE(0, 8), Operand: 1}},
		{"local SGE of another context", jetty.WR{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{foreign.SGE(0, 8)}, Remote: tg.SGE(0, 8)}},
		{"imported target as local memory", jetty.WR{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{tg.SGE(0, 8)}, Remote: tg.SGE(8, 8)}},
		{"local segment as remote memory", jetty.WR{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Remote: l.SGE(8, 8)}},
		{"no target in RM", jetty.WR{Opcode: urma.OpWrite, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 8)}},
		// Fields that contradict each other.
		{"WRITE with Inline bytes but no Inline flag", jetty.WR{Opcode: urma.OpWrite, To: r.remote, Inline: []byte("12345678"), Remote: tg.SGE(0, 8)}},
		{"SEND with Inline bytes but no Inline flag", jetty.WR{Opcode: urma.OpSend, To: r.remote, Inline: []byte("12345678")}},
		{"WRITE longer than its remote SGE", jetty.WR{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{l.SGE(0, 20)}, Remote: tg.SGE(0, 10)}},
		{"WRITE shorter than its remote SGE", jetty.WR{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 16)}},
		{"inline WRITE longer than its remote SGE", jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Inline, To: r.remote, Inline: []byte("12345678"), Remote: tg.SGE(0, 4)}},
		{"READ longer than its remote SGE", jetty.WR{Opcode: urma.OpRead, To: r.remote, Local: []segment.SGE{l.SGE(0, 20)}, Remote: tg.SGE(0, 10)}},
		{"READ shorter than its remote SGE", jetty.WR{Opcode: urma.OpRead, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 16)}},
		{"FADD on a remote SGE of 0 bytes", jetty.WR{Opcode: urma.OpFAdd, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 0), Operand: 1}},
		{"FADD on a remote SGE of 16 bytes", jetty.WR{Opcode: urma.OpFAdd, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 16), Operand: 1}},
		{"CAS on a remote SGE of 0 bytes", jetty.WR{Opcode: urma.OpCAS, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 0), Operand: 1}},
	}
	for _, f := range []jetty.Flags{jetty.RelaxOrder, jetty.StrongOrder, jetty.CompOrder} {
		pe := postErr(t, s.jfs, one(jetty.WR{Opcode: urma.OpWrite, Flags: f, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 8)}))
		require.ErrorIs(t, pe, urma.ErrNotSupported, "flag %v, which no provider honours", f)
	}
	pe := postErr(t, s.jfs, one(jetty.WR{Opcode: urma.OpWrite, Flags: 1 << 7, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 8)}))
	require.ErrorIs(t, pe, urma.ErrInvalid, "a flag bit UMDK does not define")
	// A one-sided request without its peer's JFR is the mistake a newcomer
	// makes: the error names the field to set.
	err := s.jfs.Write(nil, tg.SGE(0, 8), l.SGE(0, 8), 0, 1)
	require.ErrorIs(t, err, urma.ErrInvalid)
	require.ErrorContains(t, err, "needs WR.To")
	for _, c := range cases {
		pe := postErr(t, s.jfs, one(c.wr))
		if c.wr.Opcode.IsAtomic() && !e.attr.AtomicOps.Has(c.wr.Opcode) {
			require.ErrorIs(t, pe, urma.ErrNotSupported, "%s: the device has no %v", c.name, c.wr.Opcode)
		} else {
			require.ErrorIs(t, pe, urma.ErrInvalid, c.name)
		}
		require.Zero(t, pe.Index, c.name)
	}
	e.none(s.jfc)
	e.none(r.jfc)
	require.Equal(t, make([]byte, 64), dst.Bytes(), "refused requests write nothing")
	a, err := s.jfs.Query()
	require.NoError(t, err)
	require.Equal(t, urma.StateReady, a.State, "refused requests leave the queue READY")
	require.Zero(t, a.Outstanding, "refused requests hold no slot")
	require.NoError(t, s.jfs.NOP(0, 1))
	e.pollOK(s.jfc)
}

// testPartialBatch checks that the requests before a refused one are
// queued and executed, and the refused one and those after it are not.
func testPartialBatch(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	dst, tg := e.remoteSeg(64, rwa)
	copy(l.Bytes(), "abcdefgh")
	w := func(off uint64, ctx uint64) jetty.WR {
		return jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, UserCtx: ctx,
			Local: []segment.SGE{l.SGE(off, 2)}, Remote: tg.SGE(off, 2)}
	}
	bad := w(4, 3)
	bad.Opcode = urma.OpRead
	bad.Local = nil
	pe := postErr(t, s.jfs, []jetty.WR{w(0, 1), w(2, 2), bad, w(6, 4)})
	require.Equal(t, 2, pe.Index)
	require.ErrorIs(t, pe, urma.ErrInvalid)
	crs := e.poll(s.jfc, 2)
	require.Equal(t, uint64(1), crs[0].UserCtx)
	require.Equal(t, uint64(2), crs[1].UserCtx)
	e.none(s.jfc)
	require.Equal(t, "abcd\x00\x00\x00\x00", string(dst.Bytes()[:8]))
}

func testMsgTooLarge(t *testing.T, e *env) {
	max := e.attr.MaxMsgSize
	n := uint64(e.attr.MaxJFSSGE)
	if max/n >= 1<<32-1 {
		t.Skipf("MaxMsgSize %d cannot be exceeded with %d SGEs", max, n)
	}
	s := e.sender(jetty.JFSConfig{MaxSGE: e.attr.MaxJFSSGE})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	per := max/n + 1 // n SGEs of per bytes exceed max
	sges := make([]segment.SGE, n)
	for i := range sges {
		sges[i] = l.SGE(0, uint32(per))
	}
	pe := postErr(t, s.jfs, []jetty.WR{{Opcode: urma.OpSend, Flags: jetty.Signaled, To: r.remote, Local: sges}})
	require.ErrorIs(t, pe, urma.ErrInvalid)
	e.none(s.jfc)
}

func testCreateLimits(t *testing.T, e *env) {
	jfc := e.jfc(e.a, 0)
	_, err := jetty.NewJFS(e.a, jetty.JFSConfig{JFC: jfc, Depth: e.attr.MaxJFSDepth + 1})
	require.ErrorIs(t, err, urma.ErrInvalid, "JFS depth above the device's")
	_, err = jetty.NewJFS(e.a, jetty.JFSConfig{JFC: jfc, MaxSGE: e.attr.MaxJFSSGE + 1})
	require.ErrorIs(t, err, urma.ErrInvalid, "JFS SGEs above the device's")
	_, err = jetty.NewJFR(e.a, jetty.JFRConfig{JFC: jfc, Depth: e.attr.MaxJFRDepth + 1})
	require.ErrorIs(t, err, urma.ErrInvalid, "JFR depth above the device's")
	_, err = jetty.NewJFR(e.a, jetty.JFRConfig{JFC: jfc, MaxSGE: e.attr.MaxJFRSGE + 1})
	require.ErrorIs(t, err, urma.ErrInvalid, "JFR SGEs above the device's")
	_, err = jetty.NewJetty(e.a, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc, Depth: e.attr.MaxJFSDepth + 1}})
	require.ErrorIs(t, err, urma.ErrInvalid, "jetty depth above the device's")
	for _, m := range []urma.TransportMode{urma.RM, urma.UM} {
		if !e.attr.SupportsMode(m) {
			_, err = jetty.NewJFS(e.a, jetty.JFSConfig{JFC: jfc, Mode: m})
			require.ErrorIs(t, err, urma.ErrNotSupported, "mode %v the device lacks", m)
		}
	}
}
