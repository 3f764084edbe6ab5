package jetty_test

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/view"
)

// viewFix is two contexts with a queue each, imported both ways: a owns
// the views, b is its peer.
type viewFix struct {
	t            testing.TB
	a, b         *urma.Context
	ajfc, bjfc   *jetty.JFC
	ajfs, bjfs   *jetty.JFS
	ajfr, bjfr   *jetty.JFR
	atob, btoa   *jetty.Remote
	pollDeadline time.Duration
}

func newViewFix(t testing.TB, a, b *urma.Context) *viewFix {
	f := &viewFix{t: t, a: a, b: b, pollDeadline: 20 * time.Second}
	t.Cleanup(func() { require.NoError(t, b.Close()); require.NoError(t, a.Close()) })
	for _, side := range []struct {
		ctx *urma.Context
		jfc **jetty.JFC
		jfs **jetty.JFS
		jfr **jetty.JFR
	}{{a, &f.ajfc, &f.ajfs, &f.ajfr}, {b, &f.bjfc, &f.bjfs, &f.bjfr}} {
		jfc, err := jetty.NewJFC(side.ctx, jetty.JFCConfig{Depth: 64})
		require.NoError(t, err)
		jfs, err := jetty.NewJFS(side.ctx, jetty.JFSConfig{Depth: 16, Mode: urma.RM, JFC: jfc})
		require.NoError(t, err)
		jfr, err := jetty.NewJFR(side.ctx, jetty.JFRConfig{Depth: 16, Mode: urma.RM, JFC: jfc})
		require.NoError(t, err)
		*side.jfc, *side.jfs, *side.jfr = jfc, jfs, jfr
		t.Cleanup(func() { _ = jfs.Close(); _ = jfr.Close(); _ = jfc.Close() })
	}
	var err error
	f.atob, err = jetty.ImportJFR(t.Context(), a, f.bjfr.Descriptor(), 0)
	require.NoError(t, err)
	f.btoa, err = jetty.ImportJFR(t.Context(), b, f.ajfr.Descriptor(), 0)
	require.NoError(t, err)
	require.NoError(t, f.ajfs.Advise(t.Context(), f.atob))
	require.NoError(t, f.bjfs.Advise(t.Context(), f.btoa))
	return f
}

// seg allocates a segment of ctx filled with random bytes.
func (f *viewFix) seg(ctx *urma.Context, n uint64, acc segment.Access) *segment.Segment {
	s, err := segment.Alloc(ctx, n, segment.Config{Access: acc})
	require.NoError(f.t, err)
	f.t.Cleanup(func() { _ = s.Close() })
	fill(s.Bytes())
	return s
}

// same compares byte slices and reports the first difference, not a dump.
func (f *viewFix) same(want, got []byte, what string) {
	f.t.Helper()
	if len(want) != len(got) {
		f.t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			f.t.Fatalf("%s: byte %d is %#02x, want %#02x", what, i, got[i], want[i])
		}
	}
}

func fill(b []byte) {
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
}

// view makes a view of a.
func (f *viewFix) view(cfg view.Config) *view.View {
	v, err := view.New(f.a, cfg)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { require.NoError(f.t, v.Close()) })
	return v
}

// poll returns the next record of jfc.
func (f *viewFix) poll(jfc *jetty.JFC) jetty.CR {
	crs := make([]jetty.CR, 1)
	deadline := time.Now().Add(f.pollDeadline)
	for i := 0; i < 1000 || time.Now().Before(deadline); i++ {
		n, err := jfc.Poll(crs)
		require.NoError(f.t, err)
		if n == 1 {
			return crs[0]
		}
		if i < 1000 {
			runtime.Gosched() // a record on loopback is microseconds away
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
	f.t.Fatal("no completion")
	return jetty.CR{}
}

// quiet checks that jfc has no record.
func (f *viewFix) quiet(jfc *jetty.JFC) {
	crs := make([]jetty.CR, 1)
	time.Sleep(20 * time.Millisecond)
	n, err := jfc.Poll(crs)
	require.NoError(f.t, err)
	require.Zero(f.t, n, "unexpected record %v", crs[0])
}

// ok polls a successful record with the user context ctx.
func (f *viewFix) ok(jfc *jetty.JFC, ctx uint64) jetty.CR {
	cr := f.poll(jfc)
	require.Equal(f.t, jetty.CR{}.Status, cr.Status, "%v", cr)
	require.Equal(f.t, ctx, cr.UserCtx)
	return cr
}

// sigErr polls a record that failed its signature check.
func (f *viewFix) sigErr(jfc *jetty.JFC, ctx uint64) {
	cr := f.poll(jfc)
	require.Equal(f.t, urma.CRSignatureErr, cr.Status, "%v", cr)
	require.ErrorIs(f.t, cr.Err(), urma.ErrSignature)
	require.Equal(f.t, ctx, cr.UserCtx)
}

// chunks protects plain with sig the way the test expects the SDK to:
// hash/crc32 of each block, big-endian, after it.
func chunks(kind view.SigKind, block int, plain []byte) []byte {
	tab := crc32.IEEETable
	if kind == view.SigCRC32C {
		tab = crc32.MakeTable(crc32.Castagnoli)
	}
	var out []byte
	for i := 0; i < len(plain); i += block {
		blk := plain[i : i+block]
		out = append(out, blk...)
		out = binary.BigEndian.AppendUint32(out, crc32.Checksum(blk, tab))
	}
	return out
}

// runViewSuite runs the view cases on contexts from pair.
func runViewSuite(t *testing.T, pair func(t testing.TB) (*urma.Context, *urma.Context)) {
	for _, tc := range []struct {
		name string
		fn   func(f *viewFix)
	}{
		{"gather on WRITE", viewGatherWrite},
		{"scatter on READ", viewScatterRead},
		{"SEND into a receive view", viewSendRecv},
		{"insert into memory: storage chunks", viewInsertChunks},
		{"insert on the wire", viewInsertWire},
		{"check and strip finds the bad block", viewStripBad},
		{"receive checks and strips", viewRecvCheck},
		{"CRC32C passes through", viewCheckPassThrough},
		{"exposed to peers", viewExposed},
		{"invalidate and reconfigure", viewInvalidate},
		{"refusals", viewRefusals},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := pair(t)
			tc.fn(newViewFix(t, a, b))
		})
	}
}

// interleaved is the layout of the tests' scatter and gather: two entries
// over one segment, three times, and the stream it should give.
func interleaved(m *segment.Segment) (view.Layout, []byte) {
	l := view.Layout{Repeat: 3, Entries: []view.LayoutEntry{
		{Mem: m, Off: 0, Bytes: 100, Skip: 200},
		{Mem: m, Off: 100, Bytes: 50, Skip: 250},
	}}
	b := m.Bytes()
	var want []byte
	for r := 0; r < 3; r++ {
		want = append(want, b[r*300:r*300+150]...)
	}
	return l, want
}

func viewGatherWrite(f *viewFix) {
	m := f.seg(f.a, 1024, segment.LocalOnly)
	list := f.seg(f.a, 64, segment.LocalOnly)
	l, want := interleaved(m)
	v := f.view(view.Config{Layout: l})
	dst := f.seg(f.b, 1024, segment.Read|segment.Write)
	rt, err := segment.Import(context.Background(), f.a, dst.Descriptor(), 0)
	require.NoError(f.t, err)
	defer rt.Close()
	require.NoError(f.t, f.ajfs.Write(f.atob, rt.SGE(0, 450), v.SGE(0, 450), 0, 1))
	f.ok(f.ajfc, 1)
	f.same(want, dst.Bytes()[:450], "dst.Bytes()[:450]")

	// A sub-range of an unsigned view: stream bytes [120, 320).
	require.NoError(f.t, f.ajfs.Write(f.atob, rt.SGE(500, 200), v.SGE(120, 200), 0, 2))
	f.ok(f.ajfc, 2)
	f.same(want[120:320], dst.Bytes()[500:700], "dst.Bytes()[500:700]")

	// The list form: two pieces of two segments, in order.
	lv := f.view(view.Config{Layout: view.Layout{Entries: []view.LayoutEntry{
		{Mem: list, Off: 40, Bytes: 24}, {Mem: m, Off: 1000, Bytes: 24}}}})
	require.NoError(f.t, f.ajfs.Write(f.atob, rt.SGE(0, 48), lv.SGE(0, 48), 0, 3))
	f.ok(f.ajfc, 3)
	f.same(append(append([]byte{}, list.Bytes()[40:64]...), m.Bytes()[1000:1024]...), dst.Bytes()[:48], "dst.Bytes()[:48]")
}

func viewScatterRead(f *viewFix) {
	m := f.seg(f.a, 1024, segment.LocalOnly)
	before := append([]byte{}, m.Bytes()...)
	l, _ := interleaved(m)
	v := f.view(view.Config{Layout: l})
	src := f.seg(f.b, 450, segment.Read)
	rt, err := segment.Import(context.Background(), f.a, src.Descriptor(), 0)
	require.NoError(f.t, err)
	defer rt.Close()
	require.NoError(f.t, f.ajfs.Read(f.atob, rt.SGE(0, 450), v.SGE(0, 450), 0, 7))
	cr := f.ok(f.ajfc, 7)
	require.EqualValues(f.t, 450, cr.Len)
	// The stream landed in the pieces; the skipped bytes kept their values.
	want := append([]byte{}, before...)
	s := src.Bytes()
	for r := 0; r < 3; r++ {
		copy(want[r*300:r*300+150], s[r*150:r*150+150])
	}
	f.same(want, m.Bytes(), "m.Bytes()")
}

func viewSendRecv(f *viewFix) {
	m := f.seg(f.a, 1024, segment.LocalOnly)
	before := append([]byte{}, m.Bytes()...)
	l, _ := interleaved(m)
	v := f.view(view.Config{Layout: l})
	require.NoError(f.t, f.ajfr.Recv(v.SGE(0, 450), 11))
	src := f.seg(f.b, 300, segment.LocalOnly)
	require.NoError(f.t, f.bjfs.Send(f.btoa, src.SGE(0, 300), 0, 12))
	f.ok(f.bjfc, 12)
	cr := f.ok(f.ajfc, 11)
	require.EqualValues(f.t, 300, cr.Len)
	// 300 bytes fill two repetitions; the third keeps its bytes.
	want := append([]byte{}, before...)
	copy(want[0:150], src.Bytes()[0:150])
	copy(want[300:450], src.Bytes()[150:300])
	f.same(want, m.Bytes(), "m.Bytes()")

	// And the view as the source of a SEND.
	dst := f.seg(f.b, 512, segment.LocalOnly)
	require.NoError(f.t, f.bjfr.Recv(dst.SGE(0, 512), 13))
	require.NoError(f.t, f.ajfs.Send(f.atob, v.SGE(0, 450), 0, 14))
	f.ok(f.ajfc, 14)
	require.EqualValues(f.t, 450, f.ok(f.bjfc, 13).Len)
	_, stream := interleaved(m)
	f.same(stream, dst.Bytes()[:450], "dst.Bytes()[:450]")
}

// storageView is the storage example's server memory: n chunks of 4096
// bytes, 4048 of data and 48 of metadata, the CRC32 last, in one segment.
func storageView(f *viewFix, m *segment.Segment, n int, wire *view.Signature) *view.View {
	return f.view(view.Config{
		Layout: view.Layout{Repeat: n, Entries: []view.LayoutEntry{
			{Mem: m, Off: 0, Bytes: 4048, Skip: 48},
			{Mem: m, Off: 4048, Bytes: 48, Skip: 4048},
		}},
		Memory: &view.Signature{Kind: view.SigCRC32, BlockSize: view.BlockChunk},
		Wire:   wire,
	})
}

func viewInsertChunks(f *viewFix) {
	const n = 4
	m := f.seg(f.a, n*4096, segment.LocalOnly)
	v := storageView(f, m, n, nil)
	require.EqualValues(f.t, n*4096, v.Len())
	require.EqualValues(f.t, n*4092, v.WireLen())
	src := f.seg(f.b, n*4092, segment.Read)
	rt, err := segment.Import(context.Background(), f.a, src.Descriptor(), 0)
	require.NoError(f.t, err)
	defer rt.Close()
	require.NoError(f.t, f.ajfs.Read(f.atob, rt.SGE(0, n*4092), v.SGE(0, n*4096), 0, 21))
	f.ok(f.ajfc, 21)
	f.same(chunks(view.SigCRC32, view.BlockChunk, src.Bytes()), m.Bytes(), "m.Bytes()")
	for i := 0; i < n; i++ {
		c := m.Bytes()[i*4096 : (i+1)*4096]
		require.Equal(f.t, crc32.ChecksumIEEE(c[:4092]), binary.BigEndian.Uint32(c[4092:]), "chunk %d", i)
	}
	require.NoError(f.t, v.Check())
}

func viewInsertWire(f *viewFix) {
	m := f.seg(f.a, 2*512, segment.LocalOnly)
	v := f.view(view.Config{Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Bytes: 1024}}},
		Wire: &view.Signature{Kind: view.SigCRC32, BlockSize: view.Block512}})
	dst := f.seg(f.b, 1032, segment.Read|segment.Write)
	rt, err := segment.Import(context.Background(), f.a, dst.Descriptor(), 0)
	require.NoError(f.t, err)
	defer rt.Close()
	require.NoError(f.t, f.ajfs.Write(f.atob, rt.SGE(0, 1032), v.SGE(0, 1024), 0, 31))
	require.EqualValues(f.t, 1032, f.ok(f.ajfc, 31).Len)
	f.same(chunks(view.SigCRC32, 512, m.Bytes()), dst.Bytes(), "dst.Bytes()")
}

func viewStripBad(f *viewFix) {
	const n = 3
	m := f.seg(f.a, n*4096, segment.LocalOnly)
	plain := make([]byte, n*4092)
	fill(plain)
	copy(m.Bytes(), chunks(view.SigCRC32, view.BlockChunk, plain))
	v := storageView(f, m, n, nil)
	dst := f.seg(f.b, n*4092, segment.Read|segment.Write)
	rt, err := segment.Import(context.Background(), f.a, dst.Descriptor(), 0)
	require.NoError(f.t, err)
	defer rt.Close()
	require.NoError(f.t, f.ajfs.Write(f.atob, rt.SGE(0, n*4092), v.SGE(0, n*4096), 0, 41))
	f.ok(f.ajfc, 41)
	f.same(plain, dst.Bytes(), "dst.Bytes()")
	require.NoError(f.t, v.Check())

	// One flipped byte in chunk 2's metadata.
	m.Bytes()[2*4096+4050] ^= 0x20
	bad := append([]byte{}, m.Bytes()[2*4096:2*4096+4092]...)
	require.NoError(f.t, f.ajfs.Write(f.atob, rt.SGE(0, n*4092), v.SGE(0, n*4096), 0, 42))
	f.sigErr(f.ajfc, 42)
	var se *view.SigError
	require.ErrorAs(f.t, v.Check(), &se)
	require.Equal(f.t, 2, se.Block)
	require.Equal(f.t, crc32.ChecksumIEEE(plain[2*4092:3*4092]), se.Expected)
	require.Equal(f.t, crc32.ChecksumIEEE(bad), se.Actual)
	require.NoError(f.t, v.Check(), "Check forgets a reported mismatch")

	// Unsignaled and clean: no record, and the view is free again.
	m.Bytes()[2*4096+4050] ^= 0x20
	require.NoError(f.t, f.ajfs.Post([]jetty.WR{{Opcode: urma.OpWrite, To: f.atob, UserCtx: 43,
		Local: []segment.SGE{v.SGE(0, n*4096)}, Remote: rt.SGE(0, n*4092)}}))
	f.quiet(f.ajfc)
	require.NoError(f.t, f.ajfs.Write(f.atob, rt.SGE(0, n*4092), v.SGE(0, n*4096), 0, 44))
	f.ok(f.ajfc, 44)
}

func viewRecvCheck(f *viewFix) {
	m := f.seg(f.a, 4*512, segment.LocalOnly)
	v := f.view(view.Config{Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Bytes: 2048}}},
		Wire: &view.Signature{Kind: view.SigCRC32C, BlockSize: view.Block512}})
	plain := make([]byte, 2048)
	fill(plain)
	src := f.seg(f.b, 4*516, segment.LocalOnly)
	copy(src.Bytes(), chunks(view.SigCRC32C, 512, plain))

	require.NoError(f.t, f.ajfr.Recv(v.SGE(0, 2048), 51))
	require.NoError(f.t, f.bjfs.Send(f.btoa, src.SGE(0, 4*516), 0, 52))
	f.ok(f.bjfc, 52)
	f.ok(f.ajfc, 51)
	f.same(plain, m.Bytes(), "m.Bytes()")

	src.Bytes()[3*516+7] ^= 1 // block 3's data
	require.NoError(f.t, f.ajfr.Recv(v.SGE(0, 2048), 53))
	require.NoError(f.t, f.bjfs.Send(f.btoa, src.SGE(0, 4*516), 0, 54))
	f.ok(f.bjfc, 54)
	f.sigErr(f.ajfc, 53)
	var se *view.SigError
	require.ErrorAs(f.t, v.Check(), &se)
	require.Equal(f.t, 3, se.Block)
	require.Equal(f.t, view.SigCRC32C, se.Kind)

	// A message that is not whole protected blocks.
	require.NoError(f.t, f.ajfr.Recv(v.SGE(0, 2048), 55))
	require.NoError(f.t, f.bjfs.Send(f.btoa, src.SGE(0, 700), 0, 56))
	f.ok(f.bjfc, 56)
	cr := f.poll(f.ajfc)
	require.Equal(f.t, urma.CRLocLenErr, cr.Status, "%v", cr)
	require.EqualValues(f.t, 55, cr.UserCtx)
}

func viewCheckPassThrough(f *viewFix) {
	sig := &view.Signature{Kind: view.SigCRC32C, BlockSize: view.Block4096}
	m := f.seg(f.a, 2*4100, segment.LocalOnly)
	plain := make([]byte, 2*4096)
	fill(plain)
	copy(m.Bytes(), chunks(view.SigCRC32C, 4096, plain))
	v := f.view(view.Config{Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Bytes: 2 * 4100}}},
		Memory: sig, Wire: sig})
	require.EqualValues(f.t, 2*4100, v.WireLen())
	dst := f.seg(f.b, 2*4100, segment.Read|segment.Write)
	rt, err := segment.Import(context.Background(), f.a, dst.Descriptor(), 0)
	require.NoError(f.t, err)
	defer rt.Close()
	m.Bytes()[4100+4096] ^= 0xff // block 1's stored CRC itself
	require.NoError(f.t, f.ajfs.Write(f.atob, rt.SGE(0, 2*4100), v.SGE(0, 2*4100), 0, 61))
	f.sigErr(f.ajfc, 61)
	// The data travels as it is, bad CRC included.
	f.same(m.Bytes(), dst.Bytes(), "dst.Bytes()")
	var se *view.SigError
	require.ErrorAs(f.t, v.Check(), &se)
	require.Equal(f.t, 1, se.Block)
	require.Equal(f.t, crc32.Checksum(plain[4096:], crc32.MakeTable(crc32.Castagnoli)), se.Actual)
}

func viewExposed(f *viewFix) {
	const n = 2
	m := f.seg(f.a, n*4096, segment.LocalOnly)
	plain := make([]byte, n*4092)
	fill(plain)
	copy(m.Bytes(), chunks(view.SigCRC32, view.BlockChunk, plain))
	v, err := view.New(f.a, view.Config{
		Layout: view.Layout{Repeat: n, Entries: []view.LayoutEntry{
			{Mem: m, Off: 0, Bytes: 4048, Skip: 48}, {Mem: m, Off: 4048, Bytes: 48, Skip: 4048}}},
		Memory: &view.Signature{Kind: view.SigCRC32, BlockSize: view.BlockChunk},
		Access: segment.Read | segment.Write})
	require.NoError(f.t, err)
	defer func() { require.NoError(f.t, v.Close()) }()
	desc, err := v.Expose()
	require.NoError(f.t, err)
	require.EqualValues(f.t, n*4092, desc.Len)
	rt, err := segment.Import(context.Background(), f.b, desc, 0)
	require.NoError(f.t, err)
	defer rt.Close()

	// The peer READs the plain data: the CRCs were checked and stripped.
	buf := f.seg(f.b, n*4092, segment.LocalOnly)
	require.NoError(f.t, f.bjfs.Read(f.btoa, rt.SGE(0, n*4092), buf.SGE(0, n*4092), 0, 71))
	f.ok(f.bjfc, 71)
	f.same(plain, buf.Bytes(), "buf.Bytes()")

	// The peer WRITEs new plain data; Check puts it in memory with CRCs.
	fill(buf.Bytes())
	require.NoError(f.t, f.bjfs.Write(f.btoa, rt.SGE(0, n*4092), buf.SGE(0, n*4092), 0, 72))
	f.ok(f.bjfc, 72)
	require.NoError(f.t, v.Check())
	f.same(chunks(view.SigCRC32, view.BlockChunk, buf.Bytes()), m.Bytes(), "m.Bytes()")

	// Reconfigured to one chunk, it keeps its descriptor (as a UMR key
	// keeps its rkey): the peer's import still reaches it.
	require.NoError(f.t, v.Configure(view.Config{
		Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Off: 4096, Bytes: 4096}}},
		Memory: &view.Signature{Kind: view.SigCRC32, BlockSize: view.BlockChunk},
		Access: segment.Read | segment.Write}))
	again, err := v.Expose()
	require.NoError(f.t, err)
	require.Equal(f.t, desc, again)
	require.NoError(f.t, f.bjfs.Read(f.btoa, rt.SGE(0, 4092), buf.SGE(0, 4092), 0, 73))
	f.ok(f.bjfc, 73)
	f.same(m.Bytes()[4096:8188], buf.Bytes()[:4092], "chunk 1 read through the reconfigured view")
}

func viewInvalidate(f *viewFix) {
	m := f.seg(f.a, 1024, segment.LocalOnly)
	v, err := view.New(f.a, view.Config{
		Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Bytes: 512}}}, Access: segment.Read | segment.Write})
	require.NoError(f.t, err)
	defer v.Close()
	desc, err := v.Expose()
	require.NoError(f.t, err)
	rt, err := segment.Import(context.Background(), f.b, desc, 0)
	require.NoError(f.t, err)
	defer rt.Close()
	buf := f.seg(f.b, 512, segment.LocalOnly)
	old := v.SGE(0, 512)

	require.NoError(f.t, v.Invalidate())
	// Locally: the old SGE is refused.
	err = f.ajfs.Send(f.atob, old, 0, 81)
	require.ErrorIs(f.t, err, urma.ErrInvalid)
	_, err = v.Expose()
	require.ErrorIs(f.t, err, urma.ErrInvalid)
	// Remotely: the peer's access is aborted.
	require.NoError(f.t, f.bjfs.Read(f.btoa, rt.SGE(0, 512), buf.SGE(0, 512), 0, 82))
	cr := f.poll(f.bjfc)
	require.Equal(f.t, urma.CRRemAccessAbortErr, cr.Status, "READ of an invalidated view: %v", cr)

	// Reconfigured over other memory, it works again with a new SGE.
	require.NoError(f.t, v.Configure(view.Config{
		Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Off: 512, Bytes: 512}}}}))
	dstB := f.seg(f.b, 512, segment.LocalOnly)
	require.NoError(f.t, f.bjfr.Recv(dstB.SGE(0, 512), 83))
	require.NoError(f.t, f.ajfs.Send(f.atob, v.SGE(0, 512), 0, 84))
	f.ok(f.ajfc, 84)
	f.ok(f.bjfc, 83)
	f.same(m.Bytes()[512:], dstB.Bytes(), "dstB.Bytes()")
}

func viewRefusals(f *viewFix) {
	m := f.seg(f.a, 8192, segment.LocalOnly)
	sig := &view.Signature{Kind: view.SigCRC32, BlockSize: view.Block4096}
	dst := f.seg(f.b, 8192, segment.Read|segment.Write|segment.Atomic)
	rt, err := segment.Import(context.Background(), f.a, dst.Descriptor(), 0)
	require.NoError(f.t, err)
	defer rt.Close()

	// Bad configurations, each a clear error and no view.
	for _, c := range []struct {
		cfg  view.Config
		want error
	}{
		{view.Config{}, urma.ErrInvalid},
		{view.Config{Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Bytes: 4000}}}, Memory: sig}, urma.ErrInvalid},
		{view.Config{Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Off: 8000, Bytes: 400}}}}, urma.ErrRange},
		{view.Config{Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Bytes: 4100}}}, Memory: sig,
			Wire: &view.Signature{Kind: view.SigCRC32, BlockSize: view.Block512}}, urma.ErrInvalid},
		{view.Config{Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: rt, Bytes: 64}}}}, urma.ErrInvalid},
		{view.Config{Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Bytes: 64}}}, Access: segment.Atomic | segment.Read | segment.Write}, urma.ErrInvalid},
	} {
		_, err := view.New(f.a, c.cfg)
		require.ErrorIs(f.t, err, c.want, "%+v", c.cfg)
	}

	v := f.view(view.Config{Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Bytes: 4100}}}, Memory: sig})
	// A signed view moves whole.
	require.ErrorIs(f.t, f.ajfs.Write(f.atob, rt.SGE(0, 100), v.SGE(0, 100), 0, 91), urma.ErrInvalid)
	// Past its end.
	require.ErrorIs(f.t, f.ajfs.Write(f.atob, rt.SGE(0, 100), v.SGE(4100, 100), 0, 92), urma.ErrRange)
	// Atomics do not run through views, and a view is not a remote side.
	err = f.ajfs.FetchAdd(f.atob, rt.SGE(0, 8), v.SGE(0, 8), 1, 0, 93)
	require.ErrorIs(f.t, err, urma.ErrInvalid)
	require.ErrorIs(f.t, f.ajfs.Write(f.atob, v.SGE(0, 4100), m.SGE(0, 4100), 0, 94), urma.ErrInvalid)
	// Exposing a local view.
	_, err = v.Expose()
	require.ErrorIs(f.t, err, urma.ErrPermission)

	// One transfer at a time: the second request of a batch that names the
	// same view is refused, the first one runs.
	wr := jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: f.atob, UserCtx: 95,
		Local: []segment.SGE{v.SGE(0, 4100)}, Remote: rt.SGE(0, 4096)}
	wr2 := wr
	wr2.UserCtx = 96
	err = f.ajfs.Post([]jetty.WR{wr, wr2})
	var pe *jetty.PostError
	require.ErrorAs(f.t, err, &pe)
	require.Equal(f.t, 1, pe.Index)
	require.ErrorIs(f.t, err, urma.ErrBusy)
	require.ErrorIs(f.t, v.Configure(view.Config{Layout: view.Layout{Entries: []view.LayoutEntry{{Mem: m, Bytes: 64}}}}), urma.ErrBusy)
	f.sigErr(f.ajfc, 95) // the memory is random: block 0 fails its check
	f.quiet(f.ajfc)
	require.Error(f.t, v.Check())

	// Closed.
	require.NoError(f.t, v.Close())
	require.NoError(f.t, v.Close())
	require.ErrorIs(f.t, f.ajfs.Write(f.atob, rt.SGE(0, 4096), v.SGE(0, 4100), 0, 97), urma.ErrInvalid)
	require.ErrorIs(f.t, v.Check(), urma.ErrClosed)
	require.True(f.t, errors.Is(v.Configure(view.Config{}), urma.ErrClosed))
}

// loopbackPair opens two contexts of loopback0, on EIDs 0 and 1.
func loopbackPair(t testing.TB) (*urma.Context, *urma.Context) {
	dev, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	a, err := urma.Open(dev, 0, nil)
	require.NoError(t, err)
	b, err := urma.Open(dev, 1, nil)
	require.NoError(t, err)
	return a, b
}

func TestViewsLoopback(t *testing.T) { runViewSuite(t, loopbackPair) }
