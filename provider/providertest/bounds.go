package providertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Segment ends to the byte: for every opcode, a range that ends on a
// segment's last byte works, and one that ends a byte past it, or starts a
// byte before it, fails without touching a byte.
var boundsTests = []test{
	{"remote ranges at the segment's ends", testRemoteBounds},
	{"local ranges at the segment's ends", testLocalBounds},
	{"receive buffers at the segment's ends", testRecvBounds},
}

const boundsLen = 256

// boundsTarget is a target segment registered over the middle of a larger
// caller buffer, so that a byte past either end is memory a bad range
// would reach.
type boundsTarget struct {
	buf []byte // 64 bytes, the segment's boundsLen, 64 bytes
	seg *segment.Segment
	tg  *segment.Target
}

func (e *env) boundsTarget(access segment.Access) boundsTarget {
	buf := e.callerBuf(e.b, 64+boundsLen+64)
	seg, err := segment.Register(e.b, buf[64:64+boundsLen], segment.Config{Access: access})
	require.NoError(e.t, err)
	tg, err := segment.Import(e.t.Context(), e.a, seg.Descriptor(), 0)
	require.NoError(e.t, err)
	return boundsTarget{buf: buf, seg: seg, tg: tg}
}

// allocBoundsTarget is a boundsTarget of Alloc'd memory, for atomics, which
// caller memory of another process does not take: buf is the segment alone,
// with 64 bytes of nothing on either side.
func (e *env) allocBoundsTarget(access segment.Access) boundsTarget {
	seg, tg := e.remoteSeg(boundsLen, access)
	buf := make([]byte, 64+boundsLen+64)
	return boundsTarget{buf: buf, seg: seg, tg: tg}
}

// view is buf as the test compares it: for an Alloc'd target, the bytes
// around the segment are a copy that nothing writes.
func (b boundsTarget) view() []byte {
	if &b.buf[64] != &b.seg.Bytes()[0] {
		copy(b.buf[64:], b.seg.Bytes())
	}
	return b.buf
}

// at is the remote SGE of n bytes at off from the segment's start; off may
// be negative.
func (b boundsTarget) at(off int, n uint32) segment.SGE {
	return shifted(b.tg.SGE(0, n), int64(off))
}

func testRemoteBounds(t *testing.T, e *env) {
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	fill(l.Bytes(), 1)
	reg, alloc := e.boundsTarget(rwa), e.allocBoundsTarget(rwa)
	atomics := e.attr.AtomicOps.Has(urma.OpFAdd)
	type row struct {
		name string
		op   urma.Opcode
		off  int
		n    uint32
		ok   bool
	}
	rows := []row{
		{"WRITE of the last byte", urma.OpWrite, boundsLen - 1, 1, true},
		{"WRITE of the last 16 bytes", urma.OpWrite, boundsLen - 16, 16, true},
		{"WRITE one byte past the end", urma.OpWrite, boundsLen - 15, 16, false},
		{"WRITE of the byte after the end", urma.OpWrite, boundsLen, 1, false},
		{"WRITE from one byte before the start", urma.OpWrite, -1, 16, false},
		{"READ of the last byte", urma.OpRead, boundsLen - 1, 1, true},
		{"READ of the last 16 bytes", urma.OpRead, boundsLen - 16, 16, true},
		{"READ one byte past the end", urma.OpRead, boundsLen - 15, 16, false},
		{"READ from one byte before the start", urma.OpRead, -1, 16, false},
	}
	if atomics {
		rows = append(rows,
			row{"FADD on the last word", urma.OpFAdd, boundsLen - 8, 8, true},
			row{"FADD on the word after the end", urma.OpFAdd, boundsLen, 8, false},
			row{"FADD on the word before the start", urma.OpFAdd, -8, 8, false})
	}
	for i, c := range rows {
		b := reg
		if c.op.IsAtomic() {
			b = alloc
		}
		clear(b.buf)
		fill(b.seg.Bytes(), byte(50+i))
		before := append([]byte(nil), b.view()...)
		clear(l.Bytes()[32:])
		s := e.sender(jetty.JFSConfig{}) // a failure puts the queue in ERROR
		wr := jetty.WR{Opcode: c.op, Flags: jetty.Signaled, To: r.remote, UserCtx: uint64(i), Remote: b.at(c.off, c.n)}
		switch c.op {
		case urma.OpWrite:
			wr.Local = []segment.SGE{l.SGE(0, c.n)}
		case urma.OpRead:
			wr.Local = []segment.SGE{l.SGE(32, c.n)}
		default:
			wr.Local, wr.Operand = []segment.SGE{l.SGE(32, 8)}, 1
		}
		if !c.ok {
			expectStatus(t, e, s, wr, urma.CRRemAccessAbortErr)
			require.Equal(t, before, b.view(), "%s: no byte inside or around the segment touched", c.name)
			require.Equal(t, make([]byte, 32), l.Bytes()[32:], "%s: no byte read", c.name)
			continue
		}
		require.NoError(t, s.jfs.Post([]jetty.WR{wr}), c.name)
		cr := e.poll(s.jfc, 1)[0]
		require.Equal(t, urma.CRSuccess, cr.Status, "%s: %v", c.name, cr)
		want := append([]byte(nil), before...)
		at := 64 + c.off
		switch c.op {
		case urma.OpWrite:
			copy(want[at:], l.Bytes()[:c.n])
		case urma.OpRead:
			require.Equal(t, before[at:at+int(c.n)], l.Bytes()[32:32+c.n], c.name)
		default:
			require.Equal(t, before[at:at+8], l.Bytes()[32:40], "%s: the old value", c.name)
			want[at]++ // little-endian word, its low byte below 0xff
		}
		require.Equal(t, want, b.view(), "%s: exactly the range changed", c.name)
	}
}

func testLocalBounds(t *testing.T, e *env) {
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, boundsLen, segment.LocalOnly)
	fill(l.Bytes(), 7)
	dst, tg := e.remoteSeg(boundsLen, rwa)
	type row struct {
		name string
		op   urma.Opcode
		off  uint64
		n    uint32
		ok   bool
	}
	for i, c := range []row{
		{"WRITE from the last 16 bytes", urma.OpWrite, boundsLen - 16, 16, true},
		{"WRITE from one byte past the end", urma.OpWrite, boundsLen - 15, 16, false},
		{"READ into the last 16 bytes", urma.OpRead, boundsLen - 16, 16, true},
		{"READ into one byte past the end", urma.OpRead, boundsLen - 15, 16, false},
	} {
		clear(dst.Bytes())
		fill(dst.Bytes()[128:], 90)
		s := e.sender(jetty.JFSConfig{})
		wr := jetty.WR{Opcode: c.op, Flags: jetty.Signaled, To: r.remote, UserCtx: uint64(i),
			Local: []segment.SGE{l.SGE(c.off, c.n)}, Remote: tg.SGE(0, c.n)}
		if c.op == urma.OpRead {
			wr.Remote = tg.SGE(128, c.n)
		}
		before := append([]byte(nil), l.Bytes()...)
		if !c.ok {
			expectStatus(t, e, s, wr, urma.CRLocAccessErr)
			require.Equal(t, before, l.Bytes(), c.name)
			require.Equal(t, make([]byte, 128), dst.Bytes()[:128], c.name)
			continue
		}
		require.NoError(t, s.jfs.Post([]jetty.WR{wr}), c.name)
		cr := e.poll(s.jfc, 1)[0]
		require.Equal(t, urma.CRSuccess, cr.Status, "%s: %v", c.name, cr)
		if c.op == urma.OpWrite {
			require.Equal(t, l.Bytes()[c.off:c.off+uint64(c.n)], dst.Bytes()[:c.n], c.name)
		} else {
			require.Equal(t, dst.Bytes()[128:128+c.n], l.Bytes()[c.off:c.off+uint64(c.n)], c.name)
			fill(l.Bytes(), 7)
		}
	}
}

func testRecvBounds(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	fill(src.Bytes(), 3)
	rb := e.seg(e.b, boundsLen, segment.LocalOnly)
	err := r.jfr.PostRecv([]jetty.RecvWR{{Local: []segment.SGE{rb.SGE(boundsLen-15, 16)}}})
	require.ErrorIs(t, err, urma.ErrRange, "a buffer one byte past the segment")
	err = r.jfr.PostRecv([]jetty.RecvWR{{Local: []segment.SGE{shifted(rb.SGE(0, 16), -1)}}})
	require.ErrorIs(t, err, urma.ErrRange, "a buffer from one byte before the segment")
	require.NoError(t, r.jfr.Recv(rb.SGE(boundsLen-16, 16), 1))
	require.NoError(t, s.jfs.Send(r.remote, src.SGE(0, 16), 0, 2))
	e.pollOK(s.jfc)
	cr := e.pollOK(r.jfc)
	require.Equal(t, uint64(1), cr.UserCtx)
	require.Equal(t, src.Bytes()[:16], rb.Bytes()[boundsLen-16:])
	require.Equal(t, make([]byte, boundsLen-16), rb.Bytes()[:boundsLen-16])

	// A SEND whose source runs a byte past its segment.
	s2 := e.sender(jetty.JFSConfig{})
	require.NoError(t, r.jfr.Recv(rb.SGE(0, 64), 3))
	expectStatus(t, e, s2, jetty.WR{Opcode: urma.OpSend, To: r.remote, UserCtx: 4, Local: []segment.SGE{src.SGE(49, 16)}}, urma.CRLocAccessErr)
	e.none(r.jfc)
}

// shifted is s moved by delta bytes, which may take it outside its
// segment: an SGE names its memory when a segment makes it, and its
// address may then be anything.
func shifted(s segment.SGE, delta int64) segment.SGE {
	s.Addr = uint64(int64(s.Addr) + delta)
	return s
}
