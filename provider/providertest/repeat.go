package providertest

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// A queue may remember what it looked up for the last request it was given
// (its target, its memory), so that a loop posting one request over and
// over through Post is as fast as a prepared one. Every Post must still do
// exactly what a first post of its request does, whatever changed since
// the last.
var repeatTests = []test{
	{"WRITE reads its source, user context and flags each post", testRepeatWrite},
	{"inline bytes and the SGE list read each post", testRepeatCopies},
	{"atomics with new operands", testRepeatAtomics},
	{"SEND_IMM with new immediates", testRepeatSendImm},
	{"local segment closed", testRepeatLocalClosed},
	{"target segment closed", testRepeatTargetClosed},
	{"target queue closed", testRepeatTargetQueueClosed},
	{"remote unimported", testRepeatUnimported},
	{"queue full", testRepeatQueueFull},
	{"helpers", testRepeatHelpers},
	{"Post leaves the caller's requests as they were", testPostLeavesRequests},
}

// repeatRig is a sender, a receiver, a local and a remote segment of 64
// bytes, and a signaled WRITE of 8 bytes between them, posted once.
type repeatRig struct {
	s        sendSide
	r        recvSide
	src, dst *segment.Segment
	tg       *segment.Target
	wr       jetty.WR
}

func (e *env) repeatRig() repeatRig {
	w := repeatRig{s: e.sender(jetty.JFSConfig{}), r: e.receiver(jetty.JFRConfig{}), src: e.seg(e.a, 64, segment.LocalOnly)}
	w.dst, w.tg = e.remoteSeg(64, rwa)
	w.wr = jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: w.r.remote,
		Local: []segment.SGE{w.src.SGE(0, 8)}, Remote: w.tg.SGE(0, 8)}
	require.NoError(e.t, w.s.jfs.Post([]jetty.WR{w.wr}))
	e.pollOK(w.s.jfc)
	return w
}

// sameAsFirst posts wr on s again, and checks it comes out as a first
// post of it on a twin sender that never saw it does (see sameOutcome).
func (e *env) sameAsFirst(s sendSide, wr jetty.WR) {
	e.t.Helper()
	e.sameOutcome(s, "again", func() error { return s.jfs.Post([]jetty.WR{wr}) }, wr)
}

func testRepeatWrite(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 4096, segment.LocalOnly)
	dst, tg := e.remoteSeg(4096, rwa)
	a, err := s.jfs.Query()
	require.NoError(t, err)
	wrs := []jetty.WR{{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{src.SGE(16, 200)}, Remote: tg.SGE(300, 200)}}
	for i := range 6 {
		fill(src.Bytes(), byte(10*i+1))
		// Unsignaled and signaled in turn: only the signaled ones,
		// with their own user context, give records.
		wrs[0].UserCtx = uint64(100 + i)
		wrs[0].Flags = 0
		if i%2 == 1 {
			wrs[0].Flags = jetty.Signaled
		}
		require.NoError(t, s.jfs.Post(wrs))
		if i%2 == 1 {
			checkSendCR(t, e.pollOK(s.jfc), urma.OpWrite, uint64(100+i), 200, a, r.jfr.Descriptor().ID)
			require.Equal(t, src.Bytes()[16:216], dst.Bytes()[300:500], "post %d wrote the source as it is now", i)
		}
	}
	require.Equal(t, make([]byte, 300), dst.Bytes()[:300], "nothing before the range")
	require.Equal(t, make([]byte, 4096-500), dst.Bytes()[500:], "nothing after it")
	e.none(s.jfc)
	e.none(r.jfc)
}

func testRepeatCopies(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 256, segment.LocalOnly)
	other := e.seg(e.a, 256, segment.LocalOnly)
	dst, tg := e.remoteSeg(256, rwa)
	fill(src.Bytes(), 1)
	fill(other.Bytes(), 7)
	sges := []segment.SGE{src.SGE(0, 16)}
	wr := jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, Local: sges, Remote: tg.SGE(0, 16)}
	require.NoError(t, s.jfs.Post([]jetty.WR{wr}))
	e.pollOK(s.jfc)
	// The same slice, naming other memory: each post reads the list.
	for _, c := range []struct {
		sge  segment.SGE
		want []byte
	}{{src.SGE(100, 16), src.Bytes()[100:116]}, {other.SGE(100, 16), other.Bytes()[100:116]}, {other.SGE(0, 16), other.Bytes()[:16]}} {
		sges[0] = c.sge
		require.NoError(t, s.jfs.Post([]jetty.WR{wr}))
		e.pollOK(s.jfc)
		require.Equal(t, c.want, dst.Bytes()[:16])
	}
	if e.attr.MaxInline < 8 {
		return
	}
	s = e.sender(jetty.JFSConfig{MaxInline: 8})
	in := []byte("inline!!")
	wr = jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled | jetty.Inline, To: r.remote, Inline: in, Remote: tg.SGE(64, 8)}
	for _, b := range [][]byte{in, []byte("another!"), []byte("third!!!")} {
		wr.Inline = b
		require.NoError(t, s.jfs.Post([]jetty.WR{wr}))
		e.pollOK(s.jfc)
		require.Equal(t, string(b), string(dst.Bytes()[64:72]))
	}
	copy(in, "changed!")
	wr.Inline = in
	require.NoError(t, s.jfs.Post([]jetty.WR{wr}))
	e.pollOK(s.jfc)
	require.Equal(t, "changed!", string(dst.Bytes()[64:72]))
}

func testRepeatAtomics(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	res := e.seg(e.a, 64, segment.LocalOnly)
	word, tg := e.remoteSeg(64, rwa)
	if !e.attr.AtomicOps.Has(urma.OpFAdd) || !e.attr.AtomicOps.Has(urma.OpCAS) {
		t.Skip("the device lacks FADD or CAS: testBadAtomic checks that Post refuses them")
	}
	fadd := []jetty.WR{{Opcode: urma.OpFAdd, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{res.SGE(0, 8)}, Remote: tg.SGE(8, 8)}}
	want := uint64(0)
	for i := uint64(1); i <= 3; i++ {
		fadd[0].Operand = i
		require.NoError(t, s.jfs.Post(fadd))
		e.pollOK(s.jfc)
		require.Equal(t, want, binary.NativeEndian.Uint64(res.Bytes()[0:8]), "FADD %d returns the old value", i)
		want += i
		require.Equal(t, want, binary.NativeEndian.Uint64(word.Bytes()[8:16]))
	}
	cas := []jetty.WR{{Opcode: urma.OpCAS, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{res.SGE(8, 8)}, Remote: tg.SGE(8, 8), Compare: want + 1, Operand: 77}}
	require.NoError(t, s.jfs.Post(cas)) // does not match: no swap
	e.pollOK(s.jfc)
	require.Equal(t, want, binary.NativeEndian.Uint64(word.Bytes()[8:16]))
	cas[0].Compare = want
	require.NoError(t, s.jfs.Post(cas))
	e.pollOK(s.jfc)
	require.Equal(t, uint64(77), binary.NativeEndian.Uint64(word.Bytes()[8:16]))
}

func testRepeatSendImm(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	rb := e.seg(e.b, 256, segment.LocalOnly)
	copy(src.Bytes(), "repeated")
	op := urma.OpSendImm
	if !e.attr.ImmData {
		op = urma.OpSend
	}
	a, err := s.jfs.Query()
	require.NoError(t, err)
	wrs := []jetty.WR{{Opcode: op, Flags: jetty.Signaled, To: r.remote, Local: []segment.SGE{src.SGE(0, 8)}}}
	for i := range 3 {
		require.NoError(t, r.jfr.Recv(rb.SGE(uint64(64*i), 64), uint64(50+i)))
		wrs[0].Imm, wrs[0].UserCtx = uint64(0xabc0+i), uint64(i)
		require.NoError(t, s.jfs.Post(wrs))
		checkSendCR(t, e.pollOK(s.jfc), op, uint64(i), 8, a, r.jfr.Descriptor().ID)
		var imm *uint64
		if op == urma.OpSendImm {
			imm = u64(uint64(0xabc0 + i))
		}
		checkRecvCR(t, e.pollOK(r.jfc), op, uint64(50+i), 8, r.jfr.Descriptor().ID.ID, a.ID, imm, false)
		require.Equal(t, "repeated", string(rb.Bytes()[64*i:64*i+8]))
	}
}

func testRepeatLocalClosed(t *testing.T, e *env) {
	w := e.repeatRig()
	require.NoError(t, w.src.Close())
	e.sameAsFirst(w.s, w.wr)
	require.Equal(t, make([]byte, 64), w.dst.Bytes(), "nothing written from a closed segment")
}

func testRepeatTargetClosed(t *testing.T, e *env) {
	w := e.repeatRig()
	require.NoError(t, w.dst.Close())
	e.sameAsFirst(w.s, w.wr)
}

func testRepeatTargetQueueClosed(t *testing.T, e *env) {
	w := e.repeatRig()
	clear(w.dst.Bytes())
	require.NoError(t, w.r.jfr.Close())
	e.sameAsFirst(w.s, w.wr)
	require.Equal(t, make([]byte, 64), w.dst.Bytes(), "nothing written through a closed queue")
}

func testRepeatUnimported(t *testing.T, e *env) {
	w := e.repeatRig()
	clear(w.dst.Bytes())
	require.NoError(t, w.r.remote.Unimport())
	err := w.s.jfs.Post([]jetty.WR{w.wr})
	require.Error(t, err, "a post through an unimported remote")
	e.none(w.s.jfc)
	require.Equal(t, make([]byte, 64), w.dst.Bytes(), "nothing written through an unimported remote")
}

func testRepeatQueueFull(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{Depth: 4})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	_, tg := e.remoteSeg(64, rwa)
	wrs := []jetty.WR{{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{src.SGE(0, 8)}, Remote: tg.SGE(0, 8)}}
	for range 4 {
		require.NoError(t, s.jfs.Post(wrs))
	}
	require.ErrorIs(t, s.jfs.Post(wrs), urma.ErrAgain)
	e.poll(s.jfc, 4)
	require.NoError(t, s.jfs.Post(wrs), "room again once polled")
	e.pollOK(s.jfc)
}

// testRepeatHelpers posts through the helpers, which build their request
// each time, alternating kinds on one queue.
func testRepeatHelpers(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	dst, tg := e.remoteSeg(64, rwa)
	for i := range 4 {
		fill(src.Bytes()[:8], byte(i+1))
		require.NoError(t, s.jfs.Write(r.remote, tg.SGE(0, 8), src.SGE(0, 8), 0, uint64(i)))
		require.Equal(t, uint64(i), e.pollOK(s.jfc).UserCtx)
		require.Equal(t, src.Bytes()[:8], dst.Bytes()[:8])
		fill(dst.Bytes()[16:24], byte(i+9))
		require.NoError(t, s.jfs.Read(r.remote, tg.SGE(16, 8), src.SGE(32, 8), 0, uint64(i+10)))
		require.Equal(t, uint64(i+10), e.pollOK(s.jfc).UserCtx)
		require.Equal(t, dst.Bytes()[16:24], src.Bytes()[32:40])
	}
}

// testPostLeavesRequests posts a list of requests of every kind and checks
// that the caller's requests, their SGE lists and inline bytes are as they
// were: a post reads them and never writes them.
func testPostLeavesRequests(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 256, segment.LocalOnly)
	rb := e.seg(e.b, 256, segment.LocalOnly)
	_, tg := e.remoteSeg(256, rwa)
	require.NoError(t, r.jfr.Recv(rb.SGE(0, 64), 1))
	wrs := []jetty.WR{
		{Opcode: urma.OpWrite, To: r.remote, Local: []segment.SGE{src.SGE(0, 16)}, Remote: tg.SGE(0, 16), UserCtx: 1},
		{Opcode: urma.OpRead, To: r.remote, Local: []segment.SGE{src.SGE(64, 16)}, Remote: tg.SGE(32, 16), UserCtx: 2},
		{Opcode: urma.OpSend, Flags: jetty.Signaled, To: r.remote, Local: []segment.SGE{src.SGE(128, 8)}, UserCtx: 3},
	}
	if e.attr.MaxInline >= 8 {
		s = e.sender(jetty.JFSConfig{MaxInline: 8})
		wrs = append(wrs, jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled | jetty.Inline, To: r.remote,
			Inline: []byte("inline!!"), Remote: tg.SGE(100, 8), UserCtx: 4})
	}
	before := make([]jetty.WR, len(wrs))
	for i, w := range wrs {
		w.Local = append([]segment.SGE(nil), w.Local...)
		w.Inline = append([]byte(nil), w.Inline...)
		before[i] = w
	}
	for range 2 {
		require.NoError(t, s.jfs.Post(wrs))
		for i := range wrs {
			require.Equal(t, before[i].Opcode, wrs[i].Opcode)
			require.Equal(t, before[i].Flags, wrs[i].Flags)
			require.Equal(t, before[i].UserCtx, wrs[i].UserCtx)
			require.Same(t, before[i].To, wrs[i].To)
			require.Equal(t, before[i].Local, wrs[i].Local)
			require.Equal(t, before[i].Remote, wrs[i].Remote)
			require.Equal(t, string(before[i].Inline), string(wrs[i].Inline))
		}
		e.poll(s.jfc, len(wrs)-2)
		if len(wrs) == 3 {
			break
		}
		require.NoError(t, r.jfr.Recv(rb.SGE(0, 64), 1))
	}
}
