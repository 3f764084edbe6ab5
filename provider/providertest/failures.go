package providertest

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

var failureTests = []test{
	{"remote write out of bounds", testRemoteWriteOOB},
	{"remote read out of bounds", testRemoteReadOOB},
	{"remote access without right", testRemoteNoRight},
	{"local sge outside segment", testLocalOOB},
	{"failed request raises event and errors queue", testFailureEvent},
	{"misaligned or wrong-size atomic", testBadAtomic},
	{"send without receive exhausts RNR retries", testRNRExceeded},
	{"receive posted during RNR retries", testRNRRecovered},
	{"message longer than receive buffer", testRecvTooSmall},
	{"JFC overrun", testJFCOverrun},
	{"queue full", testQueueFull},
	{"unsignaled requests fill the queue", testUnsignaledFill},
	{"flush after error", testFlush},
	{"flush when not in error", testFlushNotError},
	{"JFR in ERROR flushes its receives", testJFRErrorFlushes},
	{"unregistered segment through import", testUnregisteredTarget},
	{"missing target", testMissingTarget},
}

// expectStatus posts one signaled request and expects a record with status
// want, the request's opcode, user context and queue id, and the queue in
// StateError afterwards.
func expectStatus(t *testing.T, e *env, s sendSide, wr jetty.WR, want urma.CRStatus) jetty.CR {
	t.Helper()
	wr.Flags |= jetty.Signaled
	require.NoError(t, s.jfs.Post([]jetty.WR{wr}))
	cr := e.poll(s.jfc, 1)[0]
	require.Equal(t, e.remoteStatus(want), cr.Status, "%v", cr)
	require.Equal(t, wr.Opcode, cr.WROpcode, "%v", cr)
	require.Equal(t, wr.UserCtx, cr.UserCtx, "%v", cr)
	a, err := s.jfs.Query()
	require.NoError(t, err)
	require.Equal(t, a.ID.ID, cr.LocalID, "%v", cr)
	require.Equal(t, urma.StateError, a.State, "a failed request puts its queue in ERROR")
	return cr
}

// remoteStatus is the status a responder's refusal gives on this device:
// want, or REM_ACCESS_ABORT_ERR where the device cannot tell the cause
// (DeviceAttr.RemoteStatus).
func (e *env) remoteStatus(want urma.CRStatus) urma.CRStatus {
	switch want {
	case urma.CRRemOperationErr, urma.CRRNRRetryCntExcErr:
		if !e.attr.RemoteStatus {
			return urma.CRRemAccessAbortErr
		}
	}
	return want
}

func testRemoteWriteOOB(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	fill(l.Bytes(), 1)
	dst, tg := e.remoteSeg(4096, rwa)
	expectStatus(t, e, s, jetty.WR{Opcode: urma.OpWrite, To: r.remote, UserCtx: 3,
		Local: []segment.SGE{l.SGE(0, 64)}, Remote: tg.SGE(4096-32, 64)}, urma.CRRemAccessAbortErr)
	require.Equal(t, make([]byte, 4096), dst.Bytes(), "no byte may be touched")

	// A segment registered over the middle of a larger buffer: a write
	// running past its end must not touch the bytes after it, and one
	// starting before it not those before it.
	buf := e.callerBuf(e.b, 192)
	mid, err := segment.Register(e.b, buf[64:128], segment.Config{Access: rwa})
	require.NoError(t, err)
	mt, err := segment.Import(t.Context(), e.a, mid.Descriptor(), 0)
	require.NoError(t, err)
	s2 := e.sender(jetty.JFSConfig{})
	expectStatus(t, e, s2, jetty.WR{Opcode: urma.OpWrite, To: r.remote, UserCtx: 4,
		Local: []segment.SGE{l.SGE(0, 64)}, Remote: mt.SGE(32, 64)}, urma.CRRemAccessAbortErr)
	s3 := e.sender(jetty.JFSConfig{})
	expectStatus(t, e, s3, jetty.WR{Opcode: urma.OpWrite, To: r.remote, UserCtx: 5,
		Local: []segment.SGE{l.SGE(0, 16)}, Remote: shifted(mt.SGE(0, 16), -8)}, urma.CRRemAccessAbortErr)
	require.Equal(t, make([]byte, 192), buf, "no byte inside or around the segment may be touched")
}

func testRemoteReadOOB(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	src, tg := e.remoteSeg(64, segment.Read)
	fill(src.Bytes(), 1)
	expectStatus(t, e, s, jetty.WR{Opcode: urma.OpRead, To: r.remote, UserCtx: 4,
		Local: []segment.SGE{l.SGE(0, 16)}, Remote: shifted(tg.SGE(0, 16), -8)},
		urma.CRRemAccessAbortErr)
	require.Equal(t, make([]byte, 64), l.Bytes())
}

func testRemoteNoRight(t *testing.T, e *env) {
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	fill(l.Bytes(), 1)
	roMem, ro := e.remoteSeg(64, segment.Read)
	rwMem, rw := e.remoteSeg(64, segment.Read|segment.Write)
	cases := []struct {
		name string
		wr   jetty.WR
		mem  *segment.Segment
	}{
		{"write to read-only", jetty.WR{Opcode: urma.OpWrite, Local: []segment.SGE{l.SGE(0, 8)}, Remote: ro.SGE(0, 8)}, roMem},
		{"atomic without ATOMIC", jetty.WR{Opcode: urma.OpFAdd, Operand: 1, Local: []segment.SGE{l.SGE(0, 8)}, Remote: rw.SGE(0, 8)}, rwMem},
	}
	for _, c := range cases {
		if c.wr.Opcode.IsAtomic() && !e.attr.AtomicOps.Has(c.wr.Opcode) {
			continue // refused at post; testBadAtomic covers it
		}
		s := e.sender(jetty.JFSConfig{}) // a failure puts the queue in ERROR
		c.wr.To, c.wr.UserCtx = r.remote, 9
		expectStatus(t, e, s, c.wr, urma.CRRemAccessAbortErr)
		if c.mem != nil {
			require.Equal(t, make([]byte, 64), c.mem.Bytes(), c.name)
		}
	}
}

func testLocalOOB(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	dst, tg := e.remoteSeg(256, rwa)
	expectStatus(t, e, s, jetty.WR{Opcode: urma.OpWrite, To: r.remote, UserCtx: 1,
		Local: []segment.SGE{l.SGE(32, 64)}, Remote: tg.SGE(0, 64)}, urma.CRLocAccessErr)
	require.Equal(t, make([]byte, 256), dst.Bytes())
}

func testFailureEvent(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	_, tg := e.remoteSeg(64, segment.Read)
	expectStatus(t, e, s, jetty.WR{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)},
		Remote: tg.SGE(0, 8)}, urma.CRRemAccessAbortErr)
	a, err := s.jfs.Query()
	require.NoError(t, err)
	require.Equal(t, urma.StateError, a.State)
	ev, err := e.a.GetAsyncEventTimeout(e.timeout)
	require.NoError(t, err)
	require.Equal(t, urma.EventJFSErr, ev.Type)
	require.Same(t, s.jfs, ev.Object)
	require.ErrorIs(t, s.jfs.Close(), urma.ErrBusy, "close before ack")
	require.NoError(t, ev.Ack())
	require.NoError(t, s.jfs.Close())
	_, err = e.a.GetAsyncEventTimeout(10 * time.Millisecond)
	require.ErrorIs(t, err, urma.ErrTimeout)
}

func testBadAtomic(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	_, tg := e.remoteSeg(64, rwa)
	bad := []jetty.WR{
		{Opcode: urma.OpFAdd, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(4, 8)},
		{Opcode: urma.OpCAS, Local: []segment.SGE{l.SGE(0, 4)}, Remote: tg.SGE(0, 8)},
		{Opcode: urma.OpSwap, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 16)},
	}
	for _, wr := range bad {
		wr.To = r.remote
		err := s.jfs.Post([]jetty.WR{wr})
		if e.attr.AtomicOps.Has(wr.Opcode) {
			require.ErrorIs(t, err, urma.ErrInvalid, "%v", wr.Opcode)
		} else {
			require.ErrorIs(t, err, urma.ErrNotSupported, "%v is not in the device's AtomicOps", wr.Opcode)
		}
	}
	e.none(s.jfc)
	a, _ := s.jfs.Query()
	require.Equal(t, urma.StateReady, a.State, "refused requests leave the queue usable")
}

func testRNRExceeded(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{RNRRetry: 2, RNRTimeout: 5 * time.Millisecond})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	start := time.Now()
	require.NoError(t, s.jfs.Send(r.remote, l.SGE(0, 8), 0, 5))
	cr := e.poll(s.jfc, 1)[0]
	require.Equal(t, e.remoteStatus(urma.CRRNRRetryCntExcErr), cr.Status, "%v", cr)
	require.Equal(t, uint64(5), cr.UserCtx)
	require.Equal(t, urma.OpSend, cr.WROpcode)
	a, err := s.jfs.Query()
	require.NoError(t, err)
	require.Equal(t, a.ID.ID, cr.LocalID)
	require.Equal(t, urma.StateError, a.State)
	if e.attr.RNR {
		require.GreaterOrEqual(t, time.Since(start), 10*time.Millisecond, "two retries 5 ms apart")
	}
	e.none(r.jfc)
}

func testRNRRecovered(t *testing.T, e *env) {
	rnrRecovered(t, e, func(s sendSide, r recvSide, l *segment.Segment) error {
		return s.jfs.Send(r.remote, l.SGE(0, 4), 0, 6)
	})
}

// rnrRecovered checks that a SEND of "late" from l with user context 6,
// posted by send before any receive, completes once one is posted.
func rnrRecovered(t *testing.T, e *env, send func(s sendSide, r recvSide, l *segment.Segment) error) {
	if !e.attr.RNR {
		t.Skip("the device has no RNR (iWARP): a SEND must find a receive posted; testRNRExceeded checks that it fails")
	}
	s := e.sender(jetty.JFSConfig{RNRRetry: 6, RNRTimeout: 50 * time.Millisecond})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	copy(l.Bytes(), "late")
	rb := e.seg(e.b, 64, segment.LocalOnly)
	require.NoError(t, send(s, r, l))
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, r.jfr.Recv(rb.SGE(0, 64), 7))
	require.Equal(t, uint64(6), e.pollOK(s.jfc).UserCtx)
	require.Equal(t, uint64(7), e.pollOK(r.jfc).UserCtx)
	require.Equal(t, "late", string(rb.Bytes()[:4]))
}

func testRecvTooSmall(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	rb := e.seg(e.b, 64, segment.LocalOnly)
	require.NoError(t, r.jfr.Recv(rb.SGE(0, 16), 8))
	require.NoError(t, s.jfs.Send(r.remote, l.SGE(0, 32), 0, 9))
	cr := e.poll(s.jfc, 1)[0]
	require.Equal(t, e.remoteStatus(urma.CRRemOperationErr), cr.Status, "%v", cr)
	require.Equal(t, urma.OpSend, cr.WROpcode)
	require.Equal(t, uint64(9), cr.UserCtx)
	rc := e.poll(r.jfc, 1)[0]
	require.Equal(t, urma.CRLocLenErr, rc.Status, "%v", rc)
	require.Equal(t, uint64(8), rc.UserCtx)
	require.NotZero(t, rc.Flags&jetty.CRRecv, "%v", rc)
	require.Equal(t, r.jfr.Descriptor().ID.ID, rc.LocalID, "%v", rc)
	ra, err := r.jfr.Query()
	require.NoError(t, err)
	require.Zero(t, ra.Outstanding, "the receive is consumed")
	require.Equal(t, make([]byte, 48), rb.Bytes()[16:], "bytes after the receive buffer touched")
}

func testJFCOverrun(t *testing.T, e *env) {
	small := e.jfc(e.a, 2)
	_, err := jetty.NewJFS(e.a, jetty.JFSConfig{JFC: small, Depth: 8})
	require.ErrorIs(t, err, urma.ErrInvalid, "a JFS that can overflow its JFC")
	require.ErrorContains(t, err, "depth 2")
	require.ErrorContains(t, err, "at least 8")
	// The queues that complete into a JFC share its room, and give it
	// back when they close.
	eight := e.jfc(e.a, 8)
	s4, err := jetty.NewJFS(e.a, jetty.JFSConfig{JFC: eight, Depth: 4})
	require.NoError(t, err)
	r4, err := jetty.NewJFR(e.a, jetty.JFRConfig{JFC: eight, Depth: 4})
	require.NoError(t, err)
	_, err = jetty.NewJFS(e.a, jetty.JFSConfig{JFC: eight, Depth: 1})
	require.ErrorIs(t, err, urma.ErrInvalid, "a third queue that can overflow the JFC")
	_, err = jetty.NewJetty(e.a, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: small, Depth: 1}, Recv: jetty.JFRConfig{Depth: 2}})
	require.ErrorIs(t, err, urma.ErrInvalid, "a Jetty whose two queues can overflow their JFC")
	require.NoError(t, s4.Close())
	r4b, err := jetty.NewJFR(e.a, jetty.JFRConfig{JFC: eight, Depth: 4})
	require.NoError(t, err, "the room of a closed queue is free again")
	require.NoError(t, r4.Close())
	require.NoError(t, r4b.Close())
	jt, err := jetty.NewJetty(e.a, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: small, Depth: 1}, Recv: jetty.JFRConfig{Depth: 1}})
	require.NoError(t, err, "a Jetty whose queues fit")
	require.NoError(t, jt.Close())
	jfc, err := jetty.NewJFC(e.a, jetty.JFCConfig{Depth: 2, AllowOverrun: true})
	require.NoError(t, err)
	s := e.sender(jetty.JFSConfig{JFC: jfc, Depth: 8})
	for i := 0; i < 3; i++ {
		require.NoError(t, s.jfs.NOP(0, uint64(i)))
	}
	ev, err := e.a.GetAsyncEventTimeout(e.timeout)
	require.NoError(t, err)
	require.Equal(t, urma.EventJFCErr, ev.Type)
	require.Same(t, jfc, ev.Object)
	require.NoError(t, ev.Ack())
	crs := e.poll(jfc, 2)
	require.Equal(t, []uint64{0, 1}, []uint64{crs[0].UserCtx, crs[1].UserCtx}, "the records that fit")
	e.none(jfc) // the third was dropped
	require.NoError(t, s.jfs.Close())
	require.NoError(t, jfc.Close())
}

func testQueueFull(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{Depth: 4})
	wrs := make([]jetty.WR, 6)
	for i := range wrs {
		wrs[i] = jetty.WR{Opcode: urma.OpNOP, Flags: jetty.Signaled, UserCtx: uint64(i)}
	}
	err := s.jfs.Post(wrs)
	var pe *jetty.PostError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 4, pe.Index)
	require.ErrorIs(t, err, urma.ErrAgain)
	crs := e.poll(s.jfc, 4)
	for i, cr := range crs {
		require.Equal(t, uint64(i), cr.UserCtx, "nothing lost, in order")
	}
	require.NoError(t, s.jfs.Post(wrs[4:]), "slots are free again after polling")
	require.Equal(t, uint64(4), e.pollOK(s.jfc).UserCtx)
	require.Equal(t, uint64(5), e.pollOK(s.jfc).UserCtx)
}

func testUnsignaledFill(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{Depth: 4})
	wr := []jetty.WR{{Opcode: urma.OpNOP}}
	for i := 0; i < 4; i++ {
		require.NoError(t, s.jfs.Post(wr))
	}
	require.ErrorIs(t, s.jfs.Post(wr), urma.ErrAgain)
	a, err := s.jfs.Query()
	require.NoError(t, err)
	require.Equal(t, 4, a.Outstanding)
}

func testFlush(t *testing.T, e *env) {
	if !e.attr.RNR {
		testFlushRacing(t, e)
		return
	}
	s := e.sender(jetty.JFSConfig{RNRRetry: 7, RNRTimeout: 5 * time.Millisecond})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	_, tg := e.remoteSeg(64, rwa)
	// The first send waits in RNR (7 retries forever); the rest queue
	// behind it, one of them unsignaled.
	wrs := []jetty.WR{
		{Opcode: urma.OpSend, Flags: jetty.Signaled, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, UserCtx: 1},
		{Opcode: urma.OpSendImm, Flags: jetty.Signaled, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Imm: 5, UserCtx: 2},
		{Opcode: urma.OpSend, To: r.remote, Local: []segment.SGE{l.SGE(8, 8)}, UserCtx: 3},
		{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 8), UserCtx: 4},
	}
	require.NoError(t, s.jfs.Post(wrs))
	time.Sleep(20 * time.Millisecond)
	e.none(s.jfc)
	_, err := s.jfs.Flush(make([]jetty.CR, 8))
	require.ErrorIs(t, err, urma.ErrBadState, "flush of a READY queue")
	require.NoError(t, s.jfs.Modify(urma.StateError))
	a, err := s.jfs.Query()
	require.NoError(t, err)
	require.Equal(t, urma.StateError, a.State)
	crs := make([]jetty.CR, 8)
	n, err := s.jfs.Flush(crs)
	require.NoError(t, err)
	require.Equal(t, len(wrs), n, "one record per pending request: %v", crs[:n])
	for i, cr := range crs[:n] {
		require.Equal(t, urma.CRWRFlushErr, cr.Status, "%v", cr)
		require.Equal(t, wrs[i].UserCtx, cr.UserCtx, "%v", cr)
		require.Equal(t, wrs[i].Opcode, cr.WROpcode, "%v", cr)
		require.Equal(t, a.ID.ID, cr.LocalID, "%v", cr)
	}
	e.none(r.jfc)
	n, err = s.jfs.Flush(crs)
	require.NoError(t, err)
	require.Zero(t, n)
	require.ErrorIs(t, s.jfs.NOP(0, 9), urma.ErrBadState, "post to an ERROR queue")
	require.ErrorIs(t, s.jfs.Modify(urma.StateReady), urma.ErrBadState, "ERROR to READY skips RESET")
	require.NoError(t, s.jfs.Modify(urma.StateReset))
	require.NoError(t, s.jfs.Modify(urma.StateReady))
	require.NoError(t, s.jfs.NOP(0, 10))
	require.Equal(t, uint64(10), e.pollOK(s.jfc).UserCtx)
}

// testFlushRacing is testFlush for devices where nothing can hold a
// request back (no RNR): it puts the queue in ERROR while large WRITEs
// run, and checks that each request is reported exactly once and in
// order, by Poll if it completed first, by Flush if not.
func testFlushRacing(t *testing.T, e *env) {
	const n, size = 32, 1 << 20
	s := e.sender(jetty.JFSConfig{Depth: n})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, size, segment.LocalOnly)
	_, tg := e.remoteSeg(size, rwa)
	wrs := make([]jetty.WR, n)
	for i := range wrs {
		wrs[i] = jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote,
			Local: []segment.SGE{l.SGE(0, size)}, Remote: tg.SGE(0, size), UserCtx: uint64(i)}
	}
	wrs[5].Flags = 0
	_, err := s.jfs.Flush(make([]jetty.CR, 1))
	require.ErrorIs(t, err, urma.ErrBadState, "flush of a READY queue")
	require.NoError(t, s.jfs.Post(wrs))
	require.NoError(t, s.jfs.Modify(urma.StateError))
	time.Sleep(50 * time.Millisecond)
	var got []jetty.CR
	buf := make([]jetty.CR, n)
	for {
		k, err := s.jfc.Poll(buf)
		require.NoError(t, err)
		for _, cr := range buf[:k] {
			require.Equal(t, urma.CRSuccess, cr.Status, "completed before the queue failed: %v", cr)
		}
		got = append(got, buf[:k]...)
		if k == 0 {
			break
		}
	}
	k, err := s.jfs.Flush(buf)
	require.NoError(t, err)
	for _, cr := range buf[:k] {
		require.Equal(t, urma.CRWRFlushErr, cr.Status, "%v", cr)
	}
	got = append(got, buf[:k]...)
	var ids []uint64
	for _, cr := range got {
		ids = append(ids, cr.UserCtx)
	}
	// Every signaled request exactly once, in order; the unsignaled one
	// only if it was flushed.
	var want []uint64
	for i := range wrs {
		if i != 5 || slices.Contains(ids, 5) {
			want = append(want, uint64(i))
		}
	}
	require.Equal(t, want, ids, "%d by Poll, %d by Flush", len(got)-k, k)
	t.Logf("%d completed before the queue failed, %d flushed", len(got)-k, k)
	require.NoError(t, s.jfs.Modify(urma.StateReset))
	require.NoError(t, s.jfs.Modify(urma.StateReady))
	require.NoError(t, s.jfs.NOP(0, 100))
	require.Equal(t, uint64(100), e.pollOK(s.jfc).UserCtx)
}

func testFlushNotError(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	_, err := s.jfs.Flush(make([]jetty.CR, 4))
	require.ErrorIs(t, err, urma.ErrBadState)
}

func testUnregisteredTarget(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	mem, tg := e.remoteSeg(64, rwa)
	require.NoError(t, mem.Unregister())
	expectStatus(t, e, s, jetty.WR{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)},
		Remote: tg.SGE(0, 8)}, urma.CRRemAccessAbortErr)
	_, err := segment.Import(t.Context(), e.a, mem.Descriptor(), 0)
	require.ErrorIs(t, err, urma.ErrNotFound, "import of a gone segment")
}

func testMissingTarget(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	require.ErrorIs(t, s.jfs.Send(nil, l.SGE(0, 8), 0, 1), urma.ErrInvalid)
}

// testJFRErrorFlushes: a JFR that leaves READY is flushed, as a receive
// queue in error is: each posted receive completes with WR_FLUSH_ERR, in
// posting order, and none is left for a message after RESET and READY.
// A receive queue moves ERROR -> RESET -> READY, as a send queue does.
func testJFRErrorFlushes(t *testing.T, e *env) {
	jfrErrorFlushes(t, e, urma.RM)
	if e.attr.SupportsMode(urma.UM) {
		jfrErrorFlushes(t, e, urma.UM)
	}
}

func jfrErrorFlushes(t *testing.T, e *env, mode urma.TransportMode) {
	r := e.receiver(jetty.JFRConfig{Mode: mode})
	old := e.seg(e.b, 192, segment.LocalOnly)
	for i := range 3 {
		require.NoError(t, r.jfr.Recv(old.SGE(uint64(64*i), 64), uint64(10+i)))
	}
	require.ErrorIs(t, r.jfr.Modify(urma.JFRStateReset), urma.ErrBadState, "READY to RESET skips ERROR")
	require.NoError(t, r.jfr.Modify(urma.JFRStateError))
	crs := e.poll(r.jfc, 3)
	for i, cr := range crs {
		require.Equal(t, urma.CRWRFlushErr, cr.Status, "%v", cr)
		require.Equal(t, uint64(10+i), cr.UserCtx, "flushed in posting order")
		require.NotZero(t, cr.Flags&jetty.CRRecv, "%v", cr)
	}
	a, err := r.jfr.Query()
	require.NoError(t, err)
	require.Equal(t, urma.JFRStateError, a.State)
	require.Zero(t, a.Outstanding, "nothing left posted")
	require.ErrorIs(t, r.jfr.Recv(old.SGE(0, 64), 1), urma.ErrBadState)
	require.ErrorIs(t, r.jfr.Modify(urma.JFRStateReady), urma.ErrBadState, "ERROR to READY skips RESET")
	require.NoError(t, r.jfr.Modify(urma.JFRStateReset))
	require.NoError(t, r.jfr.Modify(urma.JFRStateReady))

	// A new import reaches it again (on verbs, ERROR ended the senders'
	// connections); the message lands in the receive posted after READY.
	again, err := jetty.ImportJFR(t.Context(), e.a, r.jfr.Descriptor(), 0)
	require.NoError(t, err)
	fresh := e.seg(e.b, 64, segment.LocalOnly)
	require.NoError(t, r.jfr.Recv(fresh.SGE(0, 64), 20))
	s := e.sender(jetty.JFSConfig{Mode: mode})
	src := e.seg(e.a, 64, segment.LocalOnly)
	copy(src.Bytes(), "after reset")
	require.NoError(t, s.jfs.Send(again, src.SGE(0, 11), 0, 1))
	e.pollOK(s.jfc)
	cr := e.pollOK(r.jfc)
	require.Equal(t, uint64(20), cr.UserCtx, "the receive posted after READY")
	require.Equal(t, "after reset", string(fresh.Bytes()[:11]))
	require.Equal(t, make([]byte, 192), old.Bytes(), "no flushed receive's buffer touched")
}
