package providertest

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// extOpTests are the cases of WRITE_NOTIFY and SEND_INVALIDATE: what each
// does on a device that declares it (DeviceAttr.WriteNotify,
// SendInvalidate), its refusal with ErrNotSupported on one that does not,
// and the requests Post refuses.
var extOpTests = []test{
	{"WRITE_NOTIFY", testWriteNotify},
	{"WRITE_NOTIFY ordering", testWriteNotifyOrder},
	{"WRITE_NOTIFY refusals", testWriteNotifyRefusals},
	{"SEND_INVALIDATE", testSendInvalidate},
	{"SEND_INVALIDATE refusals", testSendInvalidateRefusals},
}

// notifyWR is a WRITE_NOTIFY of src to dst with notify data v at n.
func notifyWR(r recvSide, dst, src, n segment.SGE, v, ctx uint64) jetty.WR {
	return jetty.WR{Opcode: urma.OpWriteNotify, Flags: jetty.Signaled, UserCtx: ctx, To: r.remote,
		Local: []segment.SGE{src}, Remote: dst, Imm: v, Notify: n}
}

// refusesUnsupported checks that a device without op refuses wr at post
// time, and that nothing completes.
func refusesUnsupported(t *testing.T, e *env, s sendSide, wr jetty.WR) {
	t.Helper()
	err := s.jfs.Post([]jetty.WR{wr})
	require.ErrorIs(t, err, urma.ErrNotSupported, "device declares no %v", wr.Opcode)
	e.none(s.jfc)
}

func testWriteNotify(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 4096, segment.LocalOnly)
	dst, tg := e.remoteSeg(4096, rwa)
	fill(src.Bytes(), 4)
	wr := notifyWR(r, tg.SGE(64, 1000), src.SGE(0, 1000), tg.SGE(2048, 8), 0x1122334455667788, 0x31)
	if !e.attr.WriteNotify {
		refusesUnsupported(t, e, s, wr)
		return
	}
	require.NoError(t, s.jfs.Post([]jetty.WR{wr}))
	attr, _ := s.jfs.Query()
	checkSendCR(t, e.pollOK(s.jfc), urma.OpWriteNotify, 0x31, 1000, attr, r.jfr.Descriptor().ID)
	require.Equal(t, src.Bytes()[:1000], dst.Bytes()[64:1064])
	require.Equal(t, uint64(0x1122334455667788), binary.NativeEndian.Uint64(dst.Bytes()[2048:]), "notify data")
	require.Equal(t, make([]byte, 64), dst.Bytes()[:64], "bytes before the range")
	require.Equal(t, make([]byte, 2048-1064), dst.Bytes()[1064:2048], "bytes between data and notify")
	require.Zero(t, dst.Bytes()[2056], "byte after the notify word")
	e.none(r.jfc) // no receive is consumed
}

// testWriteNotifyOrder watches the notify word from another goroutine
// while writes run: whenever it shows a write's notify data, every byte of
// that write must already be there.
func testWriteNotifyOrder(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	const size = 16 << 10
	src := e.seg(e.a, size, segment.LocalOnly)
	dst, tg := e.remoteSeg(size+64, rwa)
	if !e.attr.WriteNotify {
		refusesUnsupported(t, e, s, notifyWR(r, tg.SGE(0, size), src.SGE(0, size), tg.SGE(size, 8), 1, 1))
		return
	}
	word := (*uint64)(unsafe.Pointer(&dst.Bytes()[size]))
	data := dst.Bytes()[:size]
	const rounds = 100
	var acked atomic.Uint64
	var stop atomic.Bool
	bad := make(chan string, 1)
	done := make(chan struct{})
	// The watcher reads the segment: it ends before the test, whose
	// cleanup unmaps the segment, however the test ends.
	defer func() { stop.Store(true); <-done }()
	go func() {
		defer close(done)
		for k := uint64(1); k <= rounds; k++ {
			deadline := time.Now().Add(e.timeout)
			for atomic.LoadUint64(word) != k {
				if stop.Load() {
					return
				}
				if time.Now().After(deadline) {
					bad <- "notify data never arrived"
					return
				}
			}
			for i, b := range data {
				if b != byte(k) {
					bad <- "notify data visible before the data: byte " + itoa(i)
					return
				}
			}
			acked.Store(k)
		}
		bad <- ""
	}()
	for k := uint64(1); k <= rounds; k++ {
		deadline := time.Now().Add(e.timeout)
		for acked.Load() != k-1 {
			select {
			case msg := <-bad:
				t.Fatal(msg)
			default:
			}
			require.False(t, time.Now().After(deadline), "round %d not acknowledged", k-1)
		}
		b := src.Bytes()
		for i := range b {
			b[i] = byte(k)
		}
		require.NoError(t, s.jfs.Post([]jetty.WR{notifyWR(r, tg.SGE(0, size), src.SGE(0, size), tg.SGE(size, 8), k, k)}))
		e.pollOK(s.jfc)
	}
	select {
	case msg := <-bad:
		require.Empty(t, msg)
	case <-time.After(e.timeout):
		t.Fatal("watcher did not finish")
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}

func testWriteNotifyRefusals(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	_, tg := e.remoteSeg(4096, rwa)
	_, ro := e.remoteSeg(4096, segment.Read)
	if !e.attr.WriteNotify {
		refusesUnsupported(t, e, s, notifyWR(r, tg.SGE(0, 64), src.SGE(0, 64), tg.SGE(128, 8), 1, 1))
		return
	}
	cases := []struct {
		name string
		n    segment.SGE
		want error
	}{
		{"no notify target", segment.SGE{}, urma.ErrInvalid},
		{"notify address not 8-byte aligned", tg.SGE(132, 8), urma.ErrInvalid},
		{"notify target of 4 bytes", tg.SGE(128, 4), urma.ErrInvalid},
		{"notify target of 16 bytes", tg.SGE(128, 16), urma.ErrInvalid},
		{"notify target without WRITE", ro.SGE(128, 8), urma.ErrPermission},
		{"notify target past its segment", segment.SGE{Addr: tg.SGE(0, 0).Addr + 4096, Len: 8}, urma.ErrInvalid},
		{"notify target in a local segment", src.SGE(0, 8), urma.ErrInvalid},
	}
	// An SGE past the segment needs the segment's memory: rebuild it
	// from an SGE of the target, which Addr may move freely.
	past := tg.SGE(0, 8)
	past.Addr += 4096
	cases[5].n, cases[5].want = past, urma.ErrRange
	for _, c := range cases {
		err := s.jfs.Post([]jetty.WR{notifyWR(r, tg.SGE(0, 64), src.SGE(0, 64), c.n, 1, 1)})
		require.ErrorIs(t, err, c.want, c.name)
	}
	bad := notifyWR(r, tg.SGE(0, 64), src.SGE(0, 64), tg.SGE(128, 8), 1, 1)
	bad.Remote = tg.SGE(0, 32)
	require.ErrorIs(t, s.jfs.Post([]jetty.WR{bad}), urma.ErrInvalid, "remote range shorter than the data")
	e.none(s.jfc)
	// The queue is still usable: nothing refused reached it.
	require.NoError(t, s.jfs.Post([]jetty.WR{notifyWR(r, tg.SGE(0, 64), src.SGE(0, 64), tg.SGE(128, 8), 7, 2)}))
	e.pollOK(s.jfc)
}

// invalidateWR is a SEND_INVALIDATE of src to r that invalidates seg.
func invalidateWR(r recvSide, src segment.SGE, seg *segment.Target, ctx uint64) jetty.WR {
	return jetty.WR{Opcode: urma.OpSendInvalidate, Flags: jetty.Signaled, UserCtx: ctx, To: r.remote,
		Local: []segment.SGE{src}, Invalidate: seg}
}

func testSendInvalidate(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 256, segment.LocalOnly)
	rbuf := e.seg(e.b, 256, segment.LocalOnly)
	mem, tg := e.remoteSeg(4096, rwa)
	fill(src.Bytes(), 6)
	if !e.attr.SendInvalidate {
		refusesUnsupported(t, e, s, invalidateWR(r, src.SGE(0, 100), tg, 1))
		return
	}
	// The segment works before.
	require.NoError(t, s.jfs.Write(r.remote, tg.SGE(0, 64), src.SGE(0, 64), 0, 0x40))
	e.pollOK(s.jfc)
	require.NoError(t, r.jfr.Recv(rbuf.SGE(0, 256), 0x41))
	require.NoError(t, s.jfs.Post([]jetty.WR{invalidateWR(r, src.SGE(0, 100), tg, 0x42)}))
	attr, _ := s.jfs.Query()
	checkSendCR(t, e.pollOK(s.jfc), urma.OpSendInvalidate, 0x42, 100, attr, r.jfr.Descriptor().ID)
	cr := e.poll(r.jfc, 1)[0]
	checkRecvCR(t, cr, urma.OpSendInvalidate, 0x41, 100, r.jfr.Descriptor().ID.ID, attr.ID, nil, false)
	id, ok := cr.InvalidTokenID()
	require.True(t, ok, "%v", cr)
	require.Equal(t, mem.Descriptor().TokenID, id, "the record names the invalidated token id")
	require.Equal(t, src.Bytes()[:100], rbuf.Bytes()[:100])
	// From now on any importer presenting the segment is refused: a
	// second import's READ, then the first import's WRITE.
	again, err := segment.Import(t.Context(), e.a, mem.Descriptor(), 0)
	if err == nil {
		s2 := e.sender(jetty.JFSConfig{})
		res := e.seg(e.a, 64, segment.LocalOnly)
		require.NoError(t, s2.jfs.Read(r.remote, again.SGE(0, 64), res.SGE(0, 64), 0, 0x43))
		cr := e.poll(s2.jfc, 1)[0]
		require.Equal(t, urma.CRRemAccessAbortErr, cr.Status, "READ of an invalidated segment: %v", cr)
	}
	before := append([]byte(nil), mem.Bytes()[:64]...)
	require.NoError(t, s.jfs.Write(r.remote, tg.SGE(0, 64), src.SGE(64, 64), 0, 0x44))
	cr = e.poll(s.jfc, 1)[0]
	require.Equal(t, urma.CRRemAccessAbortErr, cr.Status, "WRITE to an invalidated segment: %v", cr)
	require.Equal(t, before, mem.Bytes()[:64], "the refused WRITE changed nothing")
}

func testSendInvalidateRefusals(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	_, tg := e.remoteSeg(4096, rwa)
	if !e.attr.SendInvalidate {
		refusesUnsupported(t, e, s, invalidateWR(r, src.SGE(0, 8), tg, 1))
		return
	}
	require.ErrorIs(t, s.jfs.Post([]jetty.WR{invalidateWR(r, src.SGE(0, 8), nil, 1)}), urma.ErrInvalid, "no segment named")
	// A segment the receiver does not own: the initiator's own, imported
	// into itself. A sender may invalidate only what the receiver granted.
	own := e.seg(e.a, 4096, rwa)
	self, err := segment.Import(t.Context(), e.a, own.Descriptor(), 0)
	require.NoError(t, err)
	require.ErrorIs(t, s.jfs.Post([]jetty.WR{invalidateWR(r, src.SGE(0, 8), self, 1)}), urma.ErrPermission, "third party's segment")
	// An import into another context than the sender's.
	other, err := segment.Import(t.Context(), e.b, tg.Descriptor(), 0)
	require.NoError(t, err)
	require.ErrorIs(t, s.jfs.Post([]jetty.WR{invalidateWR(r, src.SGE(0, 8), other, 1)}), urma.ErrInvalid, "import of another context")
	// An import already closed.
	closed, err := segment.Import(t.Context(), e.a, tg.Descriptor(), 0)
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	require.Error(t, s.jfs.Post([]jetty.WR{invalidateWR(r, src.SGE(0, 8), closed, 1)}), "closed import")
	e.none(s.jfc)
	e.none(r.jfc)
	// Nothing was invalidated: the segment still takes a WRITE.
	require.NoError(t, s.jfs.Write(r.remote, tg.SGE(0, 8), src.SGE(0, 8), 0, 2))
	e.pollOK(s.jfc)
}
