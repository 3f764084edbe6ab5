package providertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Requests whose SGE lists mix memory of both kinds: segment.Alloc'd and
// segment.Register'ed caller memory. On loopback across processes the two
// are reached differently (a mapping, process_vm_readv/writev), and a list
// may hold both.
var mixedMemTests = []test{
	{"receive into alloc and register", testRecvMixedMemory},
	{"write and read with mixed lists", testOneSidedMixedMemory},
}

// mixedBufs is a target-side pair of buffers of each kind.
type mixedBufs struct {
	alloc, reg *segment.Segment
}

func (e *env) mixedBufs(ctx *urma.Context, size int, access segment.Access) mixedBufs {
	reg, err := segment.Register(ctx, e.callerBuf(ctx, size), segment.Config{Access: access})
	require.NoError(e.t, err)
	return mixedBufs{alloc: e.seg(ctx, uint64(size), access), reg: reg}
}

// piece is an SGE of a test's list and where its bytes are.
type piece struct {
	seg      *segment.Segment
	off, len int
}

func sges(ps []piece) []segment.SGE {
	out := make([]segment.SGE, len(ps))
	for i, p := range ps {
		out[i] = p.seg.SGE(uint64(p.off), uint32(p.len))
	}
	return out
}

// gathered is what a list holds, its pieces in order, cut to n bytes.
func gathered(ps []piece, n int) []byte {
	var out []byte
	for _, p := range ps {
		out = append(out, p.seg.Bytes()[p.off:p.off+p.len]...)
	}
	return out[:min(n, len(out))]
}

func testRecvMixedMemory(t *testing.T, e *env) {
	if e.attr.MaxJFRSGE < 3 {
		t.Skipf("the device declares %d receive SGEs; sgl/too_many_SGEs checks the refusal", e.attr.MaxJFRSGE)
	}
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{MaxSGE: 3})
	sa, err := s.jfs.Query()
	require.NoError(t, err)
	src := e.seg(e.a, 64, segment.LocalOnly)
	fill(src.Bytes(), 9)
	m := e.mixedBufs(e.b, 64, segment.LocalOnly)
	lists := map[string][]piece{
		"alloc,reg":       {{m.alloc, 0, 4}, {m.reg, 0, 60}},
		"alloc,alloc,reg": {{m.alloc, 0, 2}, {m.alloc, 8, 2}, {m.reg, 4, 56}},
		"reg,alloc":       {{m.reg, 0, 32}, {m.alloc, 16, 32}},
		"reg,alloc,reg":   {{m.reg, 0, 3}, {m.alloc, 0, 5}, {m.reg, 8, 40}},
	}
	for name, ps := range lists {
		for _, n := range []int{6, 40} {
			clear(m.alloc.Bytes())
			clear(m.reg.Bytes())
			require.NoError(t, r.jfr.PostRecv([]jetty.RecvWR{{UserCtx: 7, Local: sges(ps)}}))
			require.NoError(t, s.jfs.Send(r.remote, src.SGE(0, uint32(n)), 0, 1))
			checkSendCR(t, e.poll(s.jfc, 1)[0], urma.OpSend, 1, uint32(n), sa, r.jfr.Descriptor().ID)
			checkRecvCR(t, e.poll(r.jfc, 1)[0], urma.OpSend, 7, uint32(n), r.jfr.Descriptor().ID.ID, sa.ID, nil, false)
			require.Equal(t, src.Bytes()[:n], gathered(ps, n), "%s, %d bytes", name, n)
		}
	}
}

func testOneSidedMixedMemory(t *testing.T, e *env) {
	if e.attr.MaxJFSSGE < 2 || e.attr.MaxReadSGE < 2 {
		t.Skipf("the device declares %d send and %d read SGEs; sgl/too_many_SGEs checks the refusal", e.attr.MaxJFSSGE, e.attr.MaxReadSGE)
	}
	s := e.sender(jetty.JFSConfig{MaxSGE: 2})
	r := e.receiver(jetty.JFRConfig{})
	sa, err := s.jfs.Query()
	require.NoError(t, err)
	local := e.mixedBufs(e.a, 64, segment.LocalOnly)
	far := e.mixedBufs(e.b, 64, segment.Read|segment.Write)
	for _, dst := range []*segment.Segment{far.alloc, far.reg} {
		tg, err := segment.Import(t.Context(), e.a, dst.Descriptor(), 0)
		require.NoError(t, err)
		for i, ps := range [][]piece{
			{{local.alloc, 0, 10}, {local.reg, 0, 30}},
			{{local.reg, 32, 7}, {local.alloc, 20, 20}},
		} {
			fill(local.alloc.Bytes(), byte(3+i))
			fill(local.reg.Bytes(), byte(50+i))
			clear(dst.Bytes())
			n := uint32(ps[0].len + ps[1].len)
			require.NoError(t, s.jfs.Post([]jetty.WR{{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote,
				UserCtx: 2, Local: sges(ps), Remote: tg.SGE(8, n)}}))
			checkSendCR(t, e.poll(s.jfc, 1)[0], urma.OpWrite, 2, n, sa, r.jfr.Descriptor().ID)
			want := gathered(ps, int(n))
			require.Equal(t, want, dst.Bytes()[8:8+n], "WRITE from list %d", i)
			require.Equal(t, make([]byte, 8), dst.Bytes()[:8], "bytes before the range")
			require.Zero(t, dst.Bytes()[8+n], "the byte after the range")

			clear(local.alloc.Bytes())
			clear(local.reg.Bytes())
			require.NoError(t, s.jfs.Post([]jetty.WR{{Opcode: urma.OpRead, Flags: jetty.Signaled, To: r.remote,
				UserCtx: 3, Local: sges(ps), Remote: tg.SGE(8, n)}}))
			checkSendCR(t, e.poll(s.jfc, 1)[0], urma.OpRead, 3, n, sa, r.jfr.Descriptor().ID)
			require.Equal(t, want, gathered(ps, int(n)), "READ into list %d", i)
		}
		require.NoError(t, tg.Unimport())
	}
}
