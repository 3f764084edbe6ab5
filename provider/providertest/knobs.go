package providertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// knobTests check the optional queue knobs: each runs where the device
// declares it, and is refused with ErrNotSupported where it does not.
var knobTests = []test{
	{"jfr rx threshold fires once below it", testJFRThreshold},
	{"jetty rx threshold", testJettyThreshold},
	{"error suspend keeps requests and resumes", testErrorSuspend},
	{"error suspend then flush", testErrorSuspendFlush},
	{"error suspend keeps inline sends", testErrorSuspendSends},
	{"order types", testOrderTypes},
	{"err timeout", testErrTimeout},
}

// quietFor checks that ctx raises no async event within d.
func (e *env) quietFor(ctx *urma.Context, d time.Duration) {
	e.t.Helper()
	ev, err := ctx.GetAsyncEventTimeout(d)
	if err == nil {
		e.t.Fatalf("unexpected async event %v", ev.Type)
	}
	require.ErrorIs(e.t, err, urma.ErrTimeout)
}

// event waits for the next async event of ctx, checks its type and
// object, and acknowledges it.
func (e *env) event(ctx *urma.Context, typ urma.EventType, obj any) {
	e.t.Helper()
	ev, err := ctx.GetAsyncEventTimeout(e.timeout)
	require.NoError(e.t, err)
	require.Equal(e.t, typ, ev.Type)
	require.Same(e.t, obj, ev.Object)
	require.NoError(e.t, ev.Ack())
}

// sendN sends n 8-byte messages to r and waits for their records at both
// ends.
func (e *env) sendN(s sendSide, to *jetty.Remote, rjfc *jetty.JFC, l *segment.Segment, n int) {
	e.t.Helper()
	for i := 0; i < n; i++ {
		require.NoError(e.t, s.jfs.Send(to, l.SGE(0, 8), 0, uint64(i)))
		e.pollOK(s.jfc)
		e.pollOK(rjfc)
	}
}

// postRecvs posts n receives of 8 bytes each into buf.
func (e *env) postRecvs(post func([]jetty.RecvWR) error, buf *segment.Segment, n int) {
	e.t.Helper()
	wrs := make([]jetty.RecvWR, n)
	for i := range wrs {
		wrs[i] = jetty.RecvWR{UserCtx: uint64(100 + i), Local: []segment.SGE{buf.SGE(uint64(8*i), 8)}}
	}
	require.NoError(e.t, post(wrs))
}

func testJFRThreshold(t *testing.T, e *env) {
	if !e.attr.RxThreshold {
		_, err := jetty.NewJFR(e.b, jetty.JFRConfig{JFC: e.jfc(e.b, 0), RxThreshold: 2})
		require.ErrorIs(t, err, urma.ErrNotSupported, "RxThreshold without DeviceAttr.RxThreshold")
		r := e.receiver(jetty.JFRConfig{})
		require.ErrorIs(t, r.jfr.SetRxThreshold(2), urma.ErrNotSupported)
		return
	}
	_, err := jetty.NewJFR(e.b, jetty.JFRConfig{JFC: e.jfc(e.b, 0), Depth: 8, RxThreshold: 9})
	require.ErrorIs(t, err, urma.ErrInvalid, "a threshold above the depth")
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{Depth: 16})
	require.ErrorIs(t, r.jfr.SetRxThreshold(17), urma.ErrInvalid)
	require.ErrorIs(t, r.jfr.SetRxThreshold(-1), urma.ErrInvalid)
	l := e.seg(e.a, 64, segment.LocalOnly)
	buf := e.seg(e.b, 8*16, segment.LocalOnly)
	e.postRecvs(r.jfr.PostRecv, buf, 8)
	require.NoError(t, r.jfr.SetRxThreshold(4))

	e.sendN(s, r.remote, r.jfc, l, 2) // 6 posted: above
	e.quietFor(e.b, 50*time.Millisecond)
	e.sendN(s, r.remote, r.jfc, l, 4) // 2 posted: below
	e.event(e.b, urma.EventJFRLimit, r.jfr)
	e.sendN(s, r.remote, r.jfc, l, 1) // disarmed: once
	e.quietFor(e.b, 50*time.Millisecond)

	// Set again, it fires at the next message below it.
	require.NoError(t, r.jfr.SetRxThreshold(4))
	e.sendN(s, r.remote, r.jfc, l, 1)
	e.event(e.b, urma.EventJFRLimit, r.jfr)

	// Zero disarms.
	e.postRecvs(r.jfr.PostRecv, buf, 2)
	require.NoError(t, r.jfr.SetRxThreshold(4))
	require.NoError(t, r.jfr.SetRxThreshold(0))
	e.sendN(s, r.remote, r.jfc, l, 1)
	e.quietFor(e.b, 50*time.Millisecond)
}

func testJettyThreshold(t *testing.T, e *env) {
	jfc := e.jfc(e.b, 0)
	cfg := jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc}, Recv: jetty.JFRConfig{Depth: 8, RxThreshold: 3}}
	if !e.attr.RxThreshold {
		_, err := jetty.NewJetty(e.b, cfg)
		require.ErrorIs(t, err, urma.ErrNotSupported, "RxThreshold without DeviceAttr.RxThreshold")
		return
	}
	j, err := jetty.NewJetty(e.b, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	to, err := jetty.ImportJetty(t.Context(), e.a, j.Descriptor(), 0)
	require.NoError(t, err)
	s := e.sender(jetty.JFSConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	buf := e.seg(e.b, 8*8, segment.LocalOnly)
	e.postRecvs(j.PostRecv, buf, 5)
	e.sendN(s, to, jfc, l, 1) // 4 posted: above
	e.quietFor(e.b, 50*time.Millisecond)
	e.sendN(s, to, jfc, l, 3) // 1 posted: below
	e.event(e.b, urma.EventJettyLimit, j)

	// A Jetty on a shared JFR has no threshold of its own.
	r := e.receiver(jetty.JFRConfig{})
	sj, err := jetty.NewJetty(e.b, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc}, SharedJFR: r.jfr})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sj.Close() })
	require.ErrorIs(t, sj.SetRxThreshold(2), urma.ErrInvalid)
}

// suspendRig is a queue made with ErrorSuspend, whose first request fails
// (a WRITE to a read-only segment) ahead of two that would succeed.
type suspendRig struct {
	s   sendSide
	dst *segment.Segment
	wrs []jetty.WR
}

func (e *env) suspendRig() (suspendRig, bool) {
	if !e.attr.ErrorSuspend {
		_, err := jetty.NewJFS(e.a, jetty.JFSConfig{JFC: e.jfc(e.a, 0), ErrorSuspend: true})
		require.ErrorIs(e.t, err, urma.ErrNotSupported, "ErrorSuspend without DeviceAttr.ErrorSuspend")
		return suspendRig{}, false
	}
	s := e.sender(jetty.JFSConfig{ErrorSuspend: true})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	fill(l.Bytes(), 1)
	_, ro := e.remoteSeg(64, segment.Read)
	dst, rw := e.remoteSeg(64, rwa)
	wrs := []jetty.WR{
		{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Remote: ro.SGE(0, 8), UserCtx: 1},
		{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, Local: []segment.SGE{l.SGE(0, 16)}, Remote: rw.SGE(0, 16), UserCtx: 2},
		{Opcode: urma.OpNOP, Flags: jetty.Signaled, UserCtx: 3},
	}
	require.NoError(e.t, s.jfs.Post(wrs))
	crs := e.poll(s.jfc, 2)
	require.Equal(e.t, urma.CRRemAccessAbortErr, crs[0].Status, "%v", crs[0])
	require.Equal(e.t, uint64(1), crs[0].UserCtx)
	require.Equal(e.t, urma.CRWRSuspendDone, crs[1].Status, "%v", crs[1])
	require.NotZero(e.t, crs[1].Flags&jetty.CRSuspendDone, "%v", crs[1])
	a, err := s.jfs.Query()
	require.NoError(e.t, err)
	require.Equal(e.t, urma.StateSuspended, a.State)
	require.Equal(e.t, a.ID.ID, crs[1].LocalID)
	e.none(s.jfc)
	require.Equal(e.t, make([]byte, 64), dst.Bytes(), "nothing after the failed request ran")
	require.ErrorIs(e.t, s.jfs.NOP(0, 9), urma.ErrBadState, "post to a SUSPENDED queue")
	e.quietFor(e.a, 20*time.Millisecond)
	return suspendRig{s: s, dst: dst, wrs: wrs}, true
}

func testErrorSuspend(t *testing.T, e *env) {
	rig, ok := e.suspendRig()
	if !ok {
		return
	}
	require.NoError(t, rig.s.jfs.Modify(urma.StateReady))
	crs := e.poll(rig.s.jfc, 2)
	require.Equal(t, []uint64{2, 3}, []uint64{crs[0].UserCtx, crs[1].UserCtx}, "resumed in order: %v", crs)
	for _, cr := range crs {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
	}
	want := make([]byte, 64)
	fill(want[:16], 1)
	require.Equal(t, want, rig.dst.Bytes())
	require.NoError(t, rig.s.jfs.NOP(0, 10))
	require.Equal(t, uint64(10), e.pollOK(rig.s.jfc).UserCtx)
}

func testErrorSuspendFlush(t *testing.T, e *env) {
	rig, ok := e.suspendRig()
	if !ok {
		return
	}
	crs := make([]jetty.CR, 8)
	n, err := rig.s.jfs.Flush(crs)
	require.NoError(t, err)
	require.Equal(t, 2, n, "%v", crs[:n])
	for i, cr := range crs[:n] {
		require.Equal(t, urma.CRWRFlushErr, cr.Status, "%v", cr)
		require.Equal(t, rig.wrs[i+1].UserCtx, cr.UserCtx, "%v", cr)
	}
	require.Equal(t, make([]byte, 64), rig.dst.Bytes())
	require.NoError(t, rig.s.jfs.Modify(urma.StateReady))
	require.NoError(t, rig.s.jfs.NOP(0, 11))
	require.Equal(t, uint64(11), e.pollOK(rig.s.jfc).UserCtx)
}

func testOrderTypes(t *testing.T, e *env) {
	for _, o := range []urma.OrderType{urma.OrderDefault, urma.OrderOT, urma.OrderOI, urma.OrderOL, urma.OrderNO} {
		cfg := jetty.JFSConfig{JFC: e.jfc(e.a, 0), Order: o}
		j, err := jetty.NewJFS(e.a, cfg)
		if !e.attr.OrderCap.Has(o) {
			require.ErrorIs(t, err, urma.ErrNotSupported, "order %v outside OrderCap %v", o, e.attr.OrderCap)
			continue
		}
		require.NoError(t, err, "order %v in OrderCap %v", o, e.attr.OrderCap)
		require.NoError(t, j.NOP(0, 1))
		require.Equal(t, uint64(1), e.pollOK(cfg.JFC).UserCtx)
		require.NoError(t, j.Close())
	}
	if e.attr.SupportsMode(urma.UM) {
		_, err := jetty.NewJFS(e.a, jetty.JFSConfig{JFC: e.jfc(e.a, 0), Mode: urma.UM, Order: urma.OrderOT})
		require.ErrorIs(t, err, urma.ErrNotSupported, "a UM queue keeps no order")
		j, err := jetty.NewJFS(e.a, jetty.JFSConfig{JFC: e.jfc(e.a, 0), Mode: urma.UM, Order: urma.OrderNO})
		require.NoError(t, err)
		require.NoError(t, j.Close())
	}
	_, err := jetty.NewJFS(e.a, jetty.JFSConfig{JFC: e.jfc(e.a, 0), Order: urma.OrderNO + 1})
	require.ErrorIs(t, err, urma.ErrInvalid)
}

func testErrTimeout(t *testing.T, e *env) {
	_, err := jetty.NewJFS(e.a, jetty.JFSConfig{JFC: e.jfc(e.a, 0), ErrTimeout: -time.Second})
	require.ErrorIs(t, err, urma.ErrInvalid)
	_, err = jetty.NewJFS(e.a, jetty.JFSConfig{JFC: e.jfc(e.a, 0), ErrTimeout: 3 * time.Hour})
	require.ErrorIs(t, err, urma.ErrInvalid, "beyond 4.096us*2^31")
	if !e.attr.ErrTimeout {
		_, err := jetty.NewJFS(e.a, jetty.JFSConfig{JFC: e.jfc(e.a, 0), ErrTimeout: 100 * time.Millisecond})
		require.ErrorIs(t, err, urma.ErrNotSupported, "ErrTimeout without DeviceAttr.ErrTimeout")
		return
	}
	// The connection takes the timeout: a WRITE through it works.
	s := e.sender(jetty.JFSConfig{ErrTimeout: 100 * time.Millisecond})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	fill(l.Bytes(), 3)
	dst, tg := e.remoteSeg(64, rwa)
	require.NoError(t, s.jfs.Write(r.remote, tg.SGE(0, 32), l.SGE(0, 32), 0, 7))
	require.Equal(t, uint64(7), e.pollOK(s.jfc).UserCtx)
	require.Equal(t, l.Bytes()[:32], dst.Bytes()[:32])
}

// testErrorSuspendSends suspends a queue on a SEND too long for its
// receive, among small inline SENDs whose data lives only in the
// requests: resumed, those behind it deliver their data whole and in
// order.
func testErrorSuspendSends(t *testing.T, e *env) {
	if !e.attr.ErrorSuspend {
		return // suspendRig's cases check the refusal
	}
	const n, bad = 8, 2
	s := e.sender(jetty.JFSConfig{ErrorSuspend: true})
	r := e.receiver(jetty.JFRConfig{})
	rb := e.seg(e.b, 8*n, segment.LocalOnly)
	for i := 0; i < n; i++ {
		size := uint32(8)
		if i == bad {
			size = 4
		}
		require.NoError(t, r.jfr.Recv(rb.SGE(uint64(8*i), size), uint64(60+i)))
	}
	var wrs []jetty.WR
	for i := 0; i < n; i++ {
		wrs = append(wrs, jetty.WR{Opcode: urma.OpSend, Flags: jetty.Signaled | jetty.Inline, To: r.remote,
			Inline: []byte{byte(i + 1), 2, 3, 4, 5, 6, 7, byte(i + 1)}, UserCtx: uint64(i)})
	}
	require.NoError(t, s.jfs.Post(wrs))
	// The receiver's polls deliver what waits for them.
	rcs := e.poll(r.jfc, bad+1)
	require.Equal(t, urma.CRLocLenErr, rcs[bad].Status, "%v", rcs)
	crs := e.poll(s.jfc, bad+2)
	for i := 0; i < bad; i++ {
		require.Equal(t, urma.CRSuccess, crs[i].Status, "%v", crs)
	}
	require.Equal(t, e.remoteStatus(urma.CRRemOperationErr), crs[bad].Status, "%v", crs)
	require.Equal(t, urma.CRWRSuspendDone, crs[bad+1].Status, "%v", crs)
	e.none(s.jfc)
	e.none(r.jfc)
	require.NoError(t, s.jfs.Modify(urma.StateReady))
	crs = e.poll(s.jfc, n-bad-1)
	rcs = e.poll(r.jfc, n-bad-1)
	for k := range crs {
		i := bad + 1 + k
		require.Equal(t, urma.CRSuccess, crs[k].Status, "%v", crs)
		require.Equal(t, uint64(i), crs[k].UserCtx, "in order: %v", crs)
		require.Equal(t, urma.CRSuccess, rcs[k].Status, "%v", rcs)
		require.Equal(t, uint64(60+i), rcs[k].UserCtx, "%v", rcs)
		require.Equal(t, wrs[i].Inline, rb.Bytes()[8*i:8*i+8], "message %d", i)
	}
}
