package providertest

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

const rwa = segment.Read | segment.Write | segment.Atomic

var opcodeTests = []test{
	{"WRITE", testWrite},
	{"WRITE_IMM", testWriteImm},
	{"READ", testRead},
	{"SEND", func(t *testing.T, e *env) { testSend(t, e, false) }},
	{"SEND_IMM", func(t *testing.T, e *env) { testSend(t, e, true) }},
	{"CAS", testCAS},
	{"SWAP", atomicCase(urma.OpSwap, 0x1111, 0xabcd, 0xabcd)},
	{"FADD", atomicCase(urma.OpFAdd, 1000, 234, 1234)},
	{"FSUB", atomicCase(urma.OpFSub, 1000, 1, 999)},
	{"FAND", atomicCase(urma.OpFAnd, 0xff0f, 0x0ff0, 0x0f00)},
	{"FOR", atomicCase(urma.OpFOr, 0xf000, 0x000f, 0xf00f)},
	{"FXOR", atomicCase(urma.OpFXor, 0xff00, 0x0ff0, 0xf0f0)},
	{"NOP", testNOP},
	{"unsupported opcode", testUnsupportedOpcode},
}

// checkRecvCR checks the fields of a receive-side record: status SUCCESS,
// the CRRecv flag, CRImm and Imm exactly when imm is non-nil, CRJetty when
// jetty is set, the opcode, the receive request's user context, the length
// received, the receiving queue's id and the sender's id.
func checkRecvCR(t *testing.T, cr jetty.CR, op urma.Opcode, ctx uint64, n uint32, local uint32, sender urma.JettyID, imm *uint64, isJetty bool) {
	t.Helper()
	require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
	require.NotZero(t, cr.Flags&jetty.CRRecv, "CRRecv flag: %v", cr)
	require.Equal(t, op, sentAs(cr), "%v", cr)
	require.Zero(t, cr.WROpcode, "a receive-side record has no request opcode: %v", cr)
	require.Equal(t, ctx, cr.UserCtx, "%v", cr)
	require.Equal(t, n, cr.Len, "%v", cr)
	require.Equal(t, local, cr.LocalID, "%v", cr)
	require.Equal(t, sender, cr.RemoteID, "%v", cr)
	if imm != nil {
		require.NotZero(t, cr.Flags&jetty.CRImm, "CRImm flag: %v", cr)
		require.Equal(t, *imm, cr.Imm, "%v", cr)
	} else {
		require.Zero(t, cr.Flags&jetty.CRImm, "CRImm flag: %v", cr)
	}
	if isJetty {
		require.NotZero(t, cr.Flags&jetty.CRJetty, "CRJetty flag: %v", cr)
	} else {
		require.Zero(t, cr.Flags&jetty.CRJetty, "CRJetty flag: %v", cr)
	}
}

func u64(v uint64) *uint64 { return &v }

// sentAs is the opcode of the request a record tells of: WROpcode on the
// send side, and on the receive side the request opcode that produces the
// record's urma_cr_opcode_t.
func sentAs(cr jetty.CR) urma.Opcode {
	if cr.Flags&jetty.CRRecv == 0 {
		return cr.WROpcode
	}
	switch cr.Opcode {
	case jetty.CRSend:
		return urma.OpSend
	case jetty.CRSendImm:
		return urma.OpSendImm
	case jetty.CRSendInvalidate:
		return urma.OpSendInvalidate
	case jetty.CRWriteImm:
		return urma.OpWriteImm
	}
	return anyOp
}

// checkSendCR checks the fields of a send-side record.
func checkSendCR(t *testing.T, cr jetty.CR, op urma.Opcode, ctx uint64, n uint32, local jetty.Attr, remote urma.JettyID) {
	t.Helper()
	require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
	require.Equal(t, op, cr.WROpcode, "%v", cr)
	require.Zero(t, cr.Opcode, "a send-side record has no receive opcode: %v", cr)
	require.Equal(t, ctx, cr.UserCtx, "%v", cr)
	require.Equal(t, n, cr.Len, "%v", cr)
	require.Equal(t, local.ID.ID, cr.LocalID, "%v", cr)
	require.Zero(t, cr.Flags&jetty.CRRecv, "%v", cr)
	require.Equal(t, remote, cr.RemoteID, "%v", cr)
}

func testWrite(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 4096, segment.LocalOnly)
	dst, tg := e.remoteSeg(4096, rwa)
	fill(src.Bytes(), 3)
	require.NoError(t, s.jfs.Write(r.remote, tg.SGE(100, 1000), src.SGE(10, 1000), 0, 0x77))
	cr := e.pollOK(s.jfc)
	attr, _ := s.jfs.Query()
	checkSendCR(t, cr, urma.OpWrite, 0x77, 1000, attr, r.jfr.Descriptor().ID)
	require.Equal(t, src.Bytes()[10:1010], dst.Bytes()[100:1100])
	require.Equal(t, make([]byte, 100), dst.Bytes()[:100], "bytes before the range touched")
	require.Zero(t, dst.Bytes()[1100], "byte after the range touched")
	e.none(r.jfc)
}

func testWriteImm(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	dst, tg := e.remoteSeg(64, rwa)
	rbuf := e.seg(e.b, 64, segment.LocalOnly)
	fill(src.Bytes(), 9)
	if !e.attr.ImmData {
		err := s.jfs.WriteImm(r.remote, tg.SGE(0, 64), src.SGE(0, 64), 1, 0, 0x66)
		require.ErrorIs(t, err, urma.ErrNotSupported, "device declares no immediate data")
		e.none(s.jfc)
		return
	}
	require.NoError(t, r.jfr.Recv(rbuf.SGE(0, 64), 0x55))
	require.NoError(t, s.jfs.WriteImm(r.remote, tg.SGE(0, 64), src.SGE(0, 64), 0xdeadbeef, 0, 0x66))
	attr, _ := s.jfs.Query()
	checkSendCR(t, e.pollOK(s.jfc), urma.OpWriteImm, 0x66, 64, attr, r.jfr.Descriptor().ID)
	checkRecvCR(t, e.poll(r.jfc, 1)[0], urma.OpWriteImm, 0x55, 0, r.jfr.Descriptor().ID.ID, attr.ID, u64(0xdeadbeef), false)
	require.Equal(t, src.Bytes(), dst.Bytes())
	require.Equal(t, make([]byte, 64), rbuf.Bytes(), "WRITE_IMM must not fill the receive buffer")
}

func testRead(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	dst := e.seg(e.a, 4096, segment.LocalOnly)
	src, tg := e.remoteSeg(4096, segment.Read)
	fill(src.Bytes(), 5)
	require.NoError(t, s.jfs.Read(r.remote, tg.SGE(1024, 512), dst.SGE(8, 512), 0, 0x88))
	attr, _ := s.jfs.Query()
	checkSendCR(t, e.pollOK(s.jfc), urma.OpRead, 0x88, 512, attr, r.jfr.Descriptor().ID)
	require.Equal(t, src.Bytes()[1024:1536], dst.Bytes()[8:520])
	require.Equal(t, make([]byte, 8), dst.Bytes()[:8])
	require.Equal(t, make([]byte, 4096-520), dst.Bytes()[520:], "no byte after the range")
}

func testSend(t *testing.T, e *env, imm bool) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 256, segment.LocalOnly)
	rbuf := e.seg(e.b, 256, segment.LocalOnly)
	fill(src.Bytes(), 1)
	require.NoError(t, r.jfr.Recv(rbuf.SGE(0, 256), 0x10))
	op := urma.OpSend
	if imm && !e.attr.ImmData {
		err := s.jfs.SendImm(r.remote, src.SGE(0, 200), 0x1234, 0, 0x20)
		require.ErrorIs(t, err, urma.ErrNotSupported, "device declares no immediate data")
		e.none(s.jfc)
		return
	}
	if imm {
		op = urma.OpSendImm
		require.NoError(t, s.jfs.SendImm(r.remote, src.SGE(0, 200), 0x1234, 0, 0x20))
	} else {
		require.NoError(t, s.jfs.Send(r.remote, src.SGE(0, 200), 0, 0x20))
	}
	attr, _ := s.jfs.Query()
	checkSendCR(t, e.pollOK(s.jfc), op, 0x20, 200, attr, r.jfr.Descriptor().ID)
	var want *uint64
	if imm {
		want = u64(0x1234)
	}
	checkRecvCR(t, e.poll(r.jfc, 1)[0], op, 0x10, 200, r.jfr.Descriptor().ID.ID, attr.ID, want, false)
	require.Equal(t, src.Bytes()[:200], rbuf.Bytes()[:200])
	require.Equal(t, make([]byte, 56), rbuf.Bytes()[200:])
}

// atomicSetup gives a sender, a target word at offset 8 holding initial,
// and a local result buffer.
func atomicSetup(e *env, initial uint64) (sendSide, recvSide, *segment.Segment, *segment.Segment, *segment.Target) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	res := e.seg(e.a, 64, segment.LocalOnly)
	mem, tg := e.remoteSeg(64, rwa)
	binary.NativeEndian.PutUint64(mem.Bytes()[8:], initial)
	return s, r, res, mem, tg
}

func testCAS(t *testing.T, e *env) {
	if !e.attr.AtomicOps.Has(urma.OpCAS) {
		refusesAtomic(t, e, urma.OpCAS)
		return
	}
	s, r, res, mem, tg := atomicSetup(e, 41)
	// A failed compare leaves memory alone and returns the current value.
	require.NoError(t, s.jfs.CompareSwap(r.remote, tg.SGE(8, 8), res.SGE(0, 8), 40, 99, 0, 1))
	attr, _ := s.jfs.Query()
	checkSendCR(t, e.pollOK(s.jfc), urma.OpCAS, 1, 8, attr, r.jfr.Descriptor().ID)
	require.Equal(t, uint64(41), binary.NativeEndian.Uint64(res.Bytes()))
	require.Equal(t, uint64(41), binary.NativeEndian.Uint64(mem.Bytes()[8:]))
	require.NoError(t, s.jfs.CompareSwap(r.remote, tg.SGE(8, 8), res.SGE(0, 8), 41, 99, 0, 2))
	checkSendCR(t, e.pollOK(s.jfc), urma.OpCAS, 2, 8, attr, r.jfr.Descriptor().ID)
	require.Equal(t, uint64(41), binary.NativeEndian.Uint64(res.Bytes()))
	require.Equal(t, uint64(99), binary.NativeEndian.Uint64(mem.Bytes()[8:]))
	require.Zero(t, binary.NativeEndian.Uint64(mem.Bytes()[16:]), "neighbouring word touched")
}

func atomicCase(op urma.Opcode, initial, operand, want uint64) func(*testing.T, *env) {
	return func(t *testing.T, e *env) {
		if !e.attr.AtomicOps.Has(op) {
			refusesAtomic(t, e, op)
			return
		}
		s, r, res, mem, tg := atomicSetup(e, initial)
		require.NoError(t, s.jfs.Atomic(op, r.remote, tg.SGE(8, 8), res.SGE(0, 8), operand, 0, 5))
		attr, _ := s.jfs.Query()
		checkSendCR(t, e.pollOK(s.jfc), op, 5, 8, attr, r.jfr.Descriptor().ID)
		require.Equal(t, initial, binary.NativeEndian.Uint64(res.Bytes()), "old value")
		require.Equal(t, want, binary.NativeEndian.Uint64(mem.Bytes()[8:]), "new value")
	}
}

// refusesAtomic checks that a device without op refuses it at post time.
func refusesAtomic(t *testing.T, e *env, op urma.Opcode) {
	s, r, res, _, tg := atomicSetup(e, 0)
	err := s.jfs.Post([]jetty.WR{{Opcode: op, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{res.SGE(0, 8)}, Remote: tg.SGE(8, 8)}})
	require.ErrorIs(t, err, urma.ErrNotSupported)
}

func testNOP(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	require.NoError(t, s.jfs.NOP(0, 0x99))
	cr := e.pollOK(s.jfc)
	require.Equal(t, urma.OpNOP, cr.WROpcode)
	require.Equal(t, uint64(0x99), cr.UserCtx)
	require.Zero(t, cr.Len)
	a, err := s.jfs.Query()
	require.NoError(t, err)
	require.Equal(t, a.ID.ID, cr.LocalID)
	require.Zero(t, cr.Flags&jetty.CRRecv)
}

func testUnsupportedOpcode(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	var pe *jetty.PostError
	err := s.jfs.Post([]jetty.WR{{Opcode: urma.OpNOP, Flags: jetty.Signaled}, {Opcode: 0x7f, Flags: jetty.Signaled}})
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 1, pe.Index)
	require.ErrorIs(t, err, urma.ErrNotSupported)
	e.pollOK(s.jfc) // the NOP before the bad request was posted
}
