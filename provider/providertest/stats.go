package providertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

var statsTests = []test{
	{"counters of known work", testStatsKnownWork},
}

// testStatsKnownWork posts a WRITE, a SEND and a WRITE out of bounds, and
// a post to the queue in ERROR, and checks every counter of the queues,
// their JFCs and their contexts, before and after the queues close.
func testStatsKnownWork(t *testing.T, e *env) {
	a0, err := e.a.Stats()
	require.NoError(t, err)
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 256, segment.LocalOnly)
	dst, tg := e.remoteSeg(4096, rwa)
	rbuf := e.seg(e.b, 64, segment.LocalOnly)

	require.NoError(t, r.jfr.Recv(rbuf.SGE(0, 32), 1))
	require.NoError(t, r.jfr.Recv(rbuf.SGE(32, 32), 2))
	require.NoError(t, s.jfs.Write(r.remote, tg.SGE(0, 100), l.SGE(0, 100), jetty.Signaled, 1))
	require.NoError(t, s.jfs.Send(r.remote, l.SGE(100, 24), jetty.Signaled, 2))
	e.pollOK(s.jfc)
	e.pollOK(s.jfc)
	e.pollOK(r.jfc)
	// Out of the segment's bounds: an error record, the queue in ERROR.
	require.NoError(t, s.jfs.Write(r.remote, tg.SGE(4096-16, 64), l.SGE(0, 64), jetty.Signaled, 3))
	cr := e.poll(s.jfc, 1)[0]
	require.Equal(t, urma.CRRemAccessAbortErr, cr.Status, "%v", cr)
	require.Error(t, s.jfs.Send(r.remote, l.SGE(0, 8), jetty.Signaled, 4), "a post to a queue in ERROR")
	require.Equal(t, make([]byte, 16), dst.Bytes()[4096-16:])

	js, err := s.jfs.Stats()
	require.NoError(t, err)
	require.Equal(t, urma.QueueStats{Posted: 3, Bytes: 100 + 24 + 64, PostErrors: 1}, js, "jfs")
	rs, err := r.jfr.Stats()
	require.NoError(t, err)
	require.Equal(t, urma.QueueStats{RecvPosted: 2}, rs, "jfr")
	cs, err := s.jfc.Stats()
	require.NoError(t, err)
	require.Equal(t, urma.QueueStats{Completions: 3, Errors: map[urma.CRStatus]uint64{urma.CRRemAccessAbortErr: 1}}, cs, "send jfc")
	require.Equal(t, uint64(2), cs.Success())
	require.Equal(t, uint64(1), cs.Failed())
	rcs, err := r.jfc.Stats()
	require.NoError(t, err)
	require.Equal(t, urma.QueueStats{Completions: 1}, rcs, "receive jfc")

	a1, err := e.a.Stats()
	require.NoError(t, err)
	require.Equal(t, a0.JFS+1, a1.JFS)
	require.Equal(t, a0.JFC+1, a1.JFC)
	require.Equal(t, a0.Total.Posted+3, a1.Total.Posted)
	require.Equal(t, a0.Total.Bytes+188, a1.Total.Bytes)
	require.Equal(t, a0.Total.Completions+3, a1.Total.Completions)
	b1, err := e.b.Stats()
	require.NoError(t, err)
	require.GreaterOrEqual(t, b1.JFR, 1)
	require.GreaterOrEqual(t, b1.Total.RecvPosted, uint64(2))

	// Closed queues keep counting in their context's totals.
	require.NoError(t, s.jfs.Close())
	_, err = s.jfs.Stats()
	require.ErrorIs(t, err, urma.ErrClosed)
	a2, err := e.a.Stats()
	require.NoError(t, err)
	require.Equal(t, a1.JFS-1, a2.JFS)
	require.Equal(t, a1.Total.Posted, a2.Total.Posted)
	require.Equal(t, a1.Total.Bytes, a2.Total.Bytes)
}
