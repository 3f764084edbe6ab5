package providertest

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Prepared receive lists (JFR.PrepareRecv) must do exactly what PostRecv
// does with the same requests, each time they are posted.
var preparedRecvTests = []test{
	{"receives of each shape, reposted", testPreparedRecvReposted},
	{"refused as PostRecv refuses", testPreparedRecvRefused},
	{"a count outside the list", testPreparedRecvBadCount},
	{"queue full", testPreparedRecvQueueFull},
	{"queue closed", testPreparedRecvQueueClosed},
	{"segment closed", testPreparedRecvSegmentClosed},
}

func (e *env) prepareRecv(r recvSide, wrs []jetty.RecvWR) *jetty.PreparedRecv {
	e.t.Helper()
	p, err := r.jfr.PrepareRecv(wrs)
	require.NoError(e.t, err)
	require.Equal(e.t, len(wrs), p.Len())
	return p
}

// sendTagged sends n 8-byte messages holding first, first+1, ... and
// waits for their send-side records.
func (e *env) sendTagged(s sendSide, r recvSide, src *segment.Segment, first uint64, n int) {
	e.t.Helper()
	for i := range n {
		binary.LittleEndian.PutUint64(src.Bytes()[8*i:], first+uint64(i))
		require.NoError(e.t, s.jfs.Send(r.remote, src.SGE(uint64(8*i), 8), 0, uint64(i)))
	}
	for range n {
		e.pollOK(s.jfc)
	}
}

func testPreparedRecvReposted(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{Depth: 8})
	src := e.seg(e.a, 64, segment.LocalOnly)
	dst := e.seg(e.b, 256, segment.LocalOnly)
	split := []segment.SGE{dst.SGE(128, 4), dst.SGE(192, 4)} // one message across two buffers
	if e.attr.MaxJFRSGE < 2 {
		split = []segment.SGE{dst.SGE(128, 8)} // a device that receives into one buffer
	}
	wrs := []jetty.RecvWR{
		{UserCtx: 10, Local: []segment.SGE{dst.SGE(0, 8)}},
		{UserCtx: 11, Local: []segment.SGE{dst.SGE(64, 16)}},
		{UserCtx: 12, Local: split},
		{UserCtx: 13, Local: []segment.SGE{dst.SGE(32, 8)}},
	}
	p := e.prepareRecv(r, wrs)
	wrs[0].UserCtx, wrs[0].Local[0] = 99, dst.SGE(240, 8) // the list is a copy
	require.NoError(t, p.Post())
	e.sendTagged(s, r, src, 1000, 4)
	got := e.poll(r.jfc, 4)
	for i, want := range []uint64{10, 11, 12, 13} {
		require.Equal(t, urma.CRSuccess, got[i].Status, "%v", got[i])
		require.Equal(t, want, got[i].UserCtx, "record %d", i)
		require.Equal(t, uint32(8), got[i].Len, "record %d", i)
	}
	b := dst.Bytes()
	require.Equal(t, uint64(1000), binary.LittleEndian.Uint64(b[0:]))
	require.Equal(t, uint64(1001), binary.LittleEndian.Uint64(b[64:]))
	high := b[192:] // the second buffer
	if len(split) == 1 {
		high = b[132:]
	}
	require.Equal(t, uint64(1002), uint64(binary.LittleEndian.Uint32(b[128:]))|uint64(binary.LittleEndian.Uint32(high))<<32)
	require.Equal(t, uint64(1003), binary.LittleEndian.Uint64(b[32:]))
	require.Equal(t, make([]byte, 8), b[240:248], "the caller's later change to its list")

	// Reposted, the first two only, as a loop replaces what it consumed.
	require.NoError(t, p.PostFirst(2))
	a, err := r.jfr.Query()
	require.NoError(t, err)
	require.Equal(t, 2, a.Outstanding)
	e.sendTagged(s, r, src, 2000, 2)
	got = e.poll(r.jfc, 2)
	require.Equal(t, []uint64{10, 11}, []uint64{got[0].UserCtx, got[1].UserCtx})
	require.Equal(t, uint64(2000), binary.LittleEndian.Uint64(b[0:]))
	require.Equal(t, uint64(2001), binary.LittleEndian.Uint64(b[64:]))
	e.none(r.jfc)
}

func testPreparedRecvRefused(t *testing.T, e *env) {
	dst := e.seg(e.b, 64, segment.LocalOnly)
	for _, bad := range []jetty.RecvWR{
		{Local: []segment.SGE{{Addr: dst.VA(), Len: 8}}},    // no segment
		{Local: []segment.SGE{dst.SGE(60, 8)}},              // past its end
		{Local: make([]segment.SGE, e.attr.MaxJFRSGE+1)},    // too many SGEs
		{Local: []segment.SGE{shifted(dst.SGE(0, 16), -8)}}, // before its start
	} {
		r := e.receiver(jetty.JFRConfig{})
		twin := e.receiver(jetty.JFRConfig{})
		wrs := []jetty.RecvWR{{Local: []segment.SGE{dst.SGE(0, 8)}}, bad}
		errW := twin.jfr.PostRecv(wrs)
		require.Error(t, errW, "PostRecv of %v", bad)
		p, errP := r.jfr.PrepareRecv(wrs)
		want := 0 // a list refused whole posts nothing
		if errP == nil {
			// A provider that cannot check receives without posting
			// them leaves the refusal to the list's Post.
			errP = p.Post()
			b, err := twin.jfr.Query()
			require.NoError(t, err)
			want = b.Outstanding
		}
		require.Equal(t, urma.StatusOf(errW), urma.StatusOf(errP), "prepared: %v; PostRecv: %v", errP, errW)
		var pe *jetty.PostError
		require.ErrorAs(t, errP, &pe)
		require.Equal(t, 1, pe.Index, "the request refused")
		a, err := r.jfr.Query()
		require.NoError(t, err)
		require.Equal(t, want, a.Outstanding)
	}
}

func testPreparedRecvBadCount(t *testing.T, e *env) {
	r := e.receiver(jetty.JFRConfig{})
	dst := e.seg(e.b, 64, segment.LocalOnly)
	p := e.prepareRecv(r, []jetty.RecvWR{{Local: []segment.SGE{dst.SGE(0, 8)}}, {Local: []segment.SGE{dst.SGE(8, 8)}}})
	for _, n := range []int{-1, 3, 1 << 30} {
		require.ErrorIs(t, p.PostFirst(n), urma.ErrInvalid, "PostFirst(%d)", n)
	}
	require.NoError(t, p.PostFirst(0))
	a, err := r.jfr.Query()
	require.NoError(t, err)
	require.Zero(t, a.Outstanding, "nothing posted")
}

func testPreparedRecvQueueFull(t *testing.T, e *env) {
	r := e.receiver(jetty.JFRConfig{Depth: 4})
	twin := e.receiver(jetty.JFRConfig{Depth: 4})
	dst := e.seg(e.b, 64, segment.LocalOnly)
	wrs := make([]jetty.RecvWR, 6)
	for i := range wrs {
		wrs[i] = jetty.RecvWR{UserCtx: uint64(i), Local: []segment.SGE{dst.SGE(uint64(8*i), 8)}}
	}
	p := e.prepareRecv(r, wrs)
	errP, errW := p.Post(), twin.jfr.PostRecv(wrs)
	require.ErrorIs(t, errW, urma.ErrAgain)
	require.ErrorIs(t, errP, urma.ErrAgain)
	var pw, pp *jetty.PostError
	require.ErrorAs(t, errW, &pw)
	require.ErrorAs(t, errP, &pp)
	require.Equal(t, pw.Index, pp.Index, "where the queue filled up")
	a, err := r.jfr.Query()
	require.NoError(t, err)
	require.Equal(t, 4, a.Outstanding)
}

func testPreparedRecvQueueClosed(t *testing.T, e *env) {
	r := e.receiver(jetty.JFRConfig{})
	dst := e.seg(e.b, 64, segment.LocalOnly)
	p := e.prepareRecv(r, []jetty.RecvWR{{Local: []segment.SGE{dst.SGE(0, 8)}}})
	require.NoError(t, r.jfr.Close())
	require.ErrorIs(t, p.Post(), urma.ErrClosed)
	p, err := r.jfr.PrepareRecv([]jetty.RecvWR{{Local: []segment.SGE{dst.SGE(0, 8)}}})
	if err == nil {
		err = p.Post() // a provider that does not prepare (see above)
	}
	require.ErrorIs(t, err, urma.ErrClosed)
}

func testPreparedRecvSegmentClosed(t *testing.T, e *env) {
	r := e.receiver(jetty.JFRConfig{})
	twin := e.receiver(jetty.JFRConfig{})
	dst := e.seg(e.b, 64, segment.LocalOnly)
	wrs := []jetty.RecvWR{{Local: []segment.SGE{dst.SGE(0, 8)}}}
	p := e.prepareRecv(r, wrs)
	require.NoError(t, dst.Close())
	errP, errW := p.Post(), twin.jfr.PostRecv(wrs)
	require.Equal(t, urma.StatusOf(errW), urma.StatusOf(errP), "prepared: %v; PostRecv: %v", errP, errW)
	a, err := r.jfr.Query()
	require.NoError(t, err)
	b, err := twin.jfr.Query()
	require.NoError(t, err)
	require.Equal(t, b.Outstanding, a.Outstanding, "posted as PostRecv posts")
}
