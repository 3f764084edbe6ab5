package providertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

var sglTests = []test{
	{"write gathers SGEs", testWriteGather},
	{"read scatters into SGEs", testReadScatter},
	{"receive scatters into SGEs", testRecvScatter},
	{"too many SGEs", testTooManySGEs},
	{"inline send and write", testInline},
	{"inline too large", testInlineTooLarge},
	{"inline from SGEs", testInlineFromSGEs},
	{"fence orders after read", testFence},
	{"unsignaled success has no record", testUnsignaled},
	{"batch post in order", testBatchOrder},
}

func testWriteGather(t *testing.T, e *env) {
	if e.attr.MaxJFSSGE < 3 {
		refusesSGEs(t, e, 3)
		return
	}
	s := e.sender(jetty.JFSConfig{MaxSGE: 3})
	r := e.receiver(jetty.JFRConfig{})
	a := e.seg(e.a, 64, segment.LocalOnly)
	b := e.seg(e.a, 64, segment.LocalOnly)
	fill(a.Bytes(), 10)
	fill(b.Bytes(), 100)
	dst, tg := e.remoteSeg(128, rwa)
	err := s.jfs.Post([]jetty.WR{{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, UserCtx: 1,
		Local: []segment.SGE{a.SGE(0, 10), b.SGE(5, 20), a.SGE(30, 4)}, Remote: tg.SGE(0, 34)}})
	require.NoError(t, err)
	sa, err := s.jfs.Query()
	require.NoError(t, err)
	checkSendCR(t, e.poll(s.jfc, 1)[0], urma.OpWrite, 1, 34, sa, r.jfr.Descriptor().ID)
	want := append(append(append([]byte{}, a.Bytes()[:10]...), b.Bytes()[5:25]...), a.Bytes()[30:34]...)
	require.Equal(t, want, dst.Bytes()[:34])
	require.Zero(t, dst.Bytes()[34])
}

// refusesSGEs checks that a device declaring fewer than n send SGEs refuses
// a JFS with n.
func refusesSGEs(t *testing.T, e *env, n int) {
	_, err := jetty.NewJFS(e.a, jetty.JFSConfig{MaxSGE: n, JFC: e.jfc(e.a, 0)})
	require.ErrorIs(t, err, urma.ErrInvalid, "device declares %d send SGEs", e.attr.MaxJFSSGE)
}

func testReadScatter(t *testing.T, e *env) {
	if e.attr.MaxJFSSGE < 2 {
		refusesSGEs(t, e, 2)
		return
	}
	s := e.sender(jetty.JFSConfig{MaxSGE: 2})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 128, segment.LocalOnly)
	src, tg := e.remoteSeg(128, segment.Read)
	fill(src.Bytes(), 50)
	if e.attr.MaxReadSGE < 2 {
		err := s.jfs.Post([]jetty.WR{{Opcode: urma.OpRead, Flags: jetty.Signaled, To: r.remote,
			Local: []segment.SGE{l.SGE(64, 16), l.SGE(0, 16)}, Remote: tg.SGE(32, 32)}})
		require.ErrorIs(t, err, urma.ErrInvalid, "device declares %d read SGEs", e.attr.MaxReadSGE)
		e.none(s.jfc)
		return
	}
	err := s.jfs.Post([]jetty.WR{{Opcode: urma.OpRead, Flags: jetty.Signaled, To: r.remote, UserCtx: 2,
		Local: []segment.SGE{l.SGE(64, 16), l.SGE(0, 16)}, Remote: tg.SGE(32, 32)}})
	require.NoError(t, err)
	sa, err := s.jfs.Query()
	require.NoError(t, err)
	checkSendCR(t, e.poll(s.jfc, 1)[0], urma.OpRead, 2, 32, sa, r.jfr.Descriptor().ID)
	require.Equal(t, make([]byte, 16), l.Bytes()[16:32], "bytes between the SGEs touched")
	require.Equal(t, src.Bytes()[32:48], l.Bytes()[64:80])
	require.Equal(t, src.Bytes()[48:64], l.Bytes()[0:16])
}

func testRecvScatter(t *testing.T, e *env) {
	if e.attr.MaxJFRSGE < 2 {
		_, err := jetty.NewJFR(e.b, jetty.JFRConfig{MaxSGE: 2, JFC: e.jfc(e.b, 0)})
		require.ErrorIs(t, err, urma.ErrInvalid, "device declares %d receive SGEs", e.attr.MaxJFRSGE)
		return
	}
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{MaxSGE: 2})
	src := e.seg(e.a, 64, segment.LocalOnly)
	fill(src.Bytes(), 3)
	rb := e.seg(e.b, 64, segment.LocalOnly)
	require.NoError(t, r.jfr.PostRecv([]jetty.RecvWR{{UserCtx: 4, Local: []segment.SGE{rb.SGE(40, 8), rb.SGE(0, 24)}}}))
	require.NoError(t, s.jfs.Send(r.remote, src.SGE(0, 20), 0, 1))
	sa, err := s.jfs.Query()
	require.NoError(t, err)
	checkSendCR(t, e.poll(s.jfc, 1)[0], urma.OpSend, 1, 20, sa, r.jfr.Descriptor().ID)
	checkRecvCR(t, e.poll(r.jfc, 1)[0], urma.OpSend, 4, 20, r.jfr.Descriptor().ID.ID, sa.ID, nil, false)
	require.Equal(t, src.Bytes()[:8], rb.Bytes()[40:48])
	require.Equal(t, src.Bytes()[8:20], rb.Bytes()[0:12])
	require.Equal(t, make([]byte, 12), rb.Bytes()[12:24])
}

func testTooManySGEs(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{MaxSGE: 1})
	r := e.receiver(jetty.JFRConfig{MaxSGE: 1})
	l := e.seg(e.a, 64, segment.LocalOnly)
	err := s.jfs.Post([]jetty.WR{{Opcode: urma.OpSend, To: r.remote, Local: []segment.SGE{l.SGE(0, 8), l.SGE(8, 8)}}})
	require.ErrorIs(t, err, urma.ErrInvalid)
	rl := e.seg(e.b, 64, segment.LocalOnly)
	err = r.jfr.PostRecv([]jetty.RecvWR{{Local: []segment.SGE{rl.SGE(0, 8), rl.SGE(8, 8)}}})
	require.ErrorIs(t, err, urma.ErrInvalid)
	_, err = jetty.NewJFS(e.a, jetty.JFSConfig{MaxSGE: e.attr.MaxJFSSGE + 1, JFC: s.jfc})
	require.ErrorIs(t, err, urma.ErrInvalid)
}

func testInline(t *testing.T, e *env) {
	if e.attr.MaxInline < 32 {
		// The device cannot inline this much: Post must refuse it.
		s := e.sender(jetty.JFSConfig{MaxInline: e.attr.MaxInline})
		r := e.receiver(jetty.JFRConfig{})
		err := s.jfs.Post([]jetty.WR{{Opcode: urma.OpSend, Flags: jetty.Signaled | jetty.Inline, To: r.remote, Inline: make([]byte, 32)}})
		require.ErrorIs(t, err, urma.ErrInvalid, "device declares MaxInline %d", e.attr.MaxInline)
		return
	}
	s := e.sender(jetty.JFSConfig{MaxInline: 32})
	r := e.receiver(jetty.JFRConfig{})
	dst, tg := e.remoteSeg(64, rwa)
	rb := e.seg(e.b, 64, segment.LocalOnly)
	require.NoError(t, r.jfr.Recv(rb.SGE(0, 64), 1))
	buf := []byte("inline message, not registered")
	err := s.jfs.Post([]jetty.WR{
		{Opcode: urma.OpSend, Flags: jetty.Signaled | jetty.Inline, To: r.remote, Inline: buf, UserCtx: 1},
		{Opcode: urma.OpWrite, Flags: jetty.Signaled | jetty.Inline, To: r.remote, Inline: buf, Remote: tg.SGE(8, uint32(len(buf))), UserCtx: 2},
	})
	require.NoError(t, err)
	want := append([]byte(nil), buf...)
	copy(buf, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXX") // reusable at once after Post
	sa, err := s.jfs.Query()
	require.NoError(t, err)
	crs := e.poll(s.jfc, 2)
	checkSendCR(t, crs[0], urma.OpSend, 1, uint32(len(want)), sa, r.jfr.Descriptor().ID)
	checkSendCR(t, crs[1], urma.OpWrite, 2, uint32(len(want)), sa, r.jfr.Descriptor().ID)
	checkRecvCR(t, e.poll(r.jfc, 1)[0], urma.OpSend, 1, uint32(len(want)), r.jfr.Descriptor().ID.ID, sa.ID, nil, false)
	require.Equal(t, want, rb.Bytes()[:len(want)])
	require.Equal(t, want, dst.Bytes()[8:8+len(want)])
}

func testInlineTooLarge(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{MaxInline: 16})
	r := e.receiver(jetty.JFRConfig{})
	err := s.jfs.Post([]jetty.WR{{Opcode: urma.OpSend, Flags: jetty.Inline, To: r.remote, Inline: make([]byte, 17)}})
	require.ErrorIs(t, err, urma.ErrInvalid)
}

// testInlineFromSGEs posts inline requests whose data is in registered
// memory rather than in WR.Inline, as verbs users write them: the data is
// taken during the post, so the buffer may change right after, even for a
// SEND that waits for its receive (RNR). The stress soak found the data of
// such requests silently dropped.
func testInlineFromSGEs(t *testing.T, e *env) {
	if e.attr.MaxInline < 32 {
		t.Skipf("the device inlines at most %d bytes", e.attr.MaxInline)
	}
	s := e.sender(jetty.JFSConfig{MaxInline: 32, RNRRetry: 7})
	r := e.receiver(jetty.JFRConfig{})
	dst, tg := e.remoteSeg(64, rwa)
	l := e.seg(e.a, 64, segment.LocalOnly)
	msg := []byte("inline from two registered SGEs")
	copy(l.Bytes(), msg)
	rb := e.seg(e.b, 64, segment.LocalOnly)
	if !e.attr.RNR {
		// iWARP has no RNR: a SEND without a receive breaks the
		// connection, so the receive comes first there.
		require.NoError(t, r.jfr.Recv(rb.SGE(0, 64), 3))
	}

	require.NoError(t, s.jfs.Write(r.remote, tg.SGE(8, uint32(len(msg))), l.SGE(0, uint32(len(msg))), jetty.Inline, 1))
	err := s.jfs.Post([]jetty.WR{{Opcode: urma.OpSend, Flags: jetty.Signaled | jetty.Inline, To: r.remote, UserCtx: 2,
		Local: []segment.SGE{l.SGE(0, 10), l.SGE(10, uint32(len(msg)-10))}}})
	require.NoError(t, err)
	copy(l.Bytes(), "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX") // where RNR exists, the SEND still waits

	if e.attr.RNR {
		require.NoError(t, r.jfr.Recv(rb.SGE(0, 64), 3))
	}
	sa, err := s.jfs.Query()
	require.NoError(t, err)
	crs := e.poll(s.jfc, 2)
	checkSendCR(t, crs[0], urma.OpWrite, 1, uint32(len(msg)), sa, r.jfr.Descriptor().ID)
	checkSendCR(t, crs[1], urma.OpSend, 2, uint32(len(msg)), sa, r.jfr.Descriptor().ID)
	checkRecvCR(t, e.poll(r.jfc, 1)[0], urma.OpSend, 3, uint32(len(msg)), r.jfr.Descriptor().ID.ID, sa.ID, nil, false)
	require.Equal(t, msg, dst.Bytes()[8:8+len(msg)])
	require.Equal(t, msg, rb.Bytes()[:len(msg)])

	err = s.jfs.Post([]jetty.WR{{Opcode: urma.OpSend, Flags: jetty.Inline, To: r.remote, Inline: msg, Local: []segment.SGE{l.SGE(0, 8)}}})
	require.ErrorIs(t, err, urma.ErrInvalid, "data in both Inline and Local")
	err = s.jfs.Post([]jetty.WR{{Opcode: urma.OpSend, Flags: jetty.Inline, To: r.remote, Local: []segment.SGE{l.SGE(0, 33)}}})
	require.ErrorIs(t, err, urma.ErrInvalid, "33 bytes from SGEs exceed MaxInline 32")
}

// testFence reads a word and then, fenced, overwrites it: the read must see
// the old value.
func testFence(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	mem, tg := e.remoteSeg(64, rwa)
	copy(mem.Bytes(), "oldvalue")
	copy(l.Bytes()[32:], "newvalue")
	err := s.jfs.Post([]jetty.WR{
		{Opcode: urma.OpRead, Flags: jetty.Signaled, To: r.remote, Local: []segment.SGE{l.SGE(0, 8)}, Remote: tg.SGE(0, 8), UserCtx: 1},
		{Opcode: urma.OpWrite, Flags: jetty.Signaled | jetty.Fence, To: r.remote, Local: []segment.SGE{l.SGE(32, 8)}, Remote: tg.SGE(0, 8), UserCtx: 2},
	})
	require.NoError(t, err)
	crs := e.poll(s.jfc, 2)
	require.Equal(t, []uint64{1, 2}, []uint64{crs[0].UserCtx, crs[1].UserCtx}, "completion order")
	require.Equal(t, "oldvalue", string(l.Bytes()[:8]))
	require.Equal(t, "newvalue", string(mem.Bytes()[:8]))
}

func testUnsignaled(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	dst, tg := e.remoteSeg(64, rwa)
	copy(l.Bytes(), "abcdefgh")
	err := s.jfs.Post([]jetty.WR{
		{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{l.SGE(0, 4)}, Remote: tg.SGE(0, 4), UserCtx: 1},
		{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, Local: []segment.SGE{l.SGE(4, 4)}, Remote: tg.SGE(4, 4), UserCtx: 2},
	})
	require.NoError(t, err)
	cr := e.pollOK(s.jfc)
	require.Equal(t, uint64(2), cr.UserCtx, "only the signaled request completes")
	require.Equal(t, "abcdefgh", string(dst.Bytes()[:8]))
	e.none(s.jfc)
}

func testBatchOrder(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 256, segment.LocalOnly)
	fill(l.Bytes(), 11)
	dst, tg := e.remoteSeg(1024, rwa)
	wrs := make([]jetty.WR, 32)
	for i := range wrs {
		wrs[i] = jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, UserCtx: uint64(i),
			Local: []segment.SGE{l.SGE(uint64(i)*8, 8)}, Remote: tg.SGE(uint64(i)*8, 8)}
	}
	require.NoError(t, s.jfs.Post(wrs))
	for i, cr := range e.poll(s.jfc, len(wrs)) {
		require.Equal(t, uint64(i), cr.UserCtx)
		require.Equal(t, urma.CRSuccess, cr.Status)
	}
	require.Equal(t, l.Bytes(), dst.Bytes()[:256], "each of the 32 words written from its own source")
	require.Equal(t, make([]byte, 1024-256), dst.Bytes()[256:], "nothing past them")
}
