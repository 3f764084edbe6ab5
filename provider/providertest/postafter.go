package providertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Prepared.PostAfter must be PollWait and then Post, whenever the provider
// posts the request: the records it returns never include the request's
// own, the post sees the queue as the records left it, and a wait that
// fails posts nothing.
var postAfterTests = []test{
	{"a chain of READs on a queue of depth one", testPostAfterChain},
	{"a reply that waits for a receive", testPostAfterRecv},
	{"a reply leaves only after the message", testPostAfterNotBefore},
	{"a refused post keeps the records", testPostAfterRefused},
	{"a failed record stops the post", testPostAfterFailure},
	{"a wait that ends posts nothing", testPostAfterStopped},
}

// postAfter is PostAfter with the env's timeout, which fails the test.
func (e *env) postAfter(p *jetty.Prepared, j *jetty.JFC, crs []jetty.CR) (int, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	n, err := p.PostAfter(ctx, j, crs, 0)
	require.NoError(e.t, ctx.Err(), "PostAfter waited past the timeout")
	return n, err
}

// testPostAfterChain posts each READ from the poll that finds the last
// one's record, on a queue with room for one: Post there would refuse
// the next READ until that record is polled. The READs alternate
// between two destinations, so that each one's bytes are checked while
// the next one runs.
func testPostAfterChain(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{Depth: 1})
	r := e.receiver(jetty.JFRConfig{})
	dst := e.seg(e.a, 4096, segment.LocalOnly)
	src, tg := e.remoteSeg(4096, rwa)
	fill(src.Bytes(), 5)
	var reads [2]*jetty.Prepared
	for k := range reads {
		reads[k] = e.prepare(s, jetty.WR{Opcode: urma.OpRead, Flags: jetty.Signaled, To: r.remote,
			Local: []segment.SGE{dst.SGE(uint64(64*k), 64)}, Remote: tg.SGE(uint64(64*k), 64)})
	}
	require.NoError(t, reads[0].Post())
	crs := make([]jetty.CR, 4)
	const n = 20
	for i := 1; i < n; i++ {
		p := reads[i%2]
		p.SetUserCtx(uint64(i))
		require.Error(t, p.Post(), "request %d: a post before the poll finds the queue full", i)
		k, err := e.postAfter(p, s.jfc, crs)
		require.NoError(t, err, "request %d", i)
		require.Equal(t, 1, k, "request %d: the last READ's record alone: %v", i, crs[:k])
		require.Equal(t, urma.CRSuccess, crs[0].Status, "%v", crs[0])
		require.Equal(t, uint64(i-1), crs[0].UserCtx, "records in order, never the new request's")
		last := 64 * ((i - 1) % 2)
		require.Equal(t, src.Bytes()[last:last+64], dst.Bytes()[last:last+64], "READ %d", i-1)
		clear(dst.Bytes()[last : last+64])
	}
	require.Equal(t, uint64(n-1), e.pollOK(s.jfc).UserCtx)
	last := 64 * ((n - 1) % 2)
	require.Equal(t, src.Bytes()[last:last+64], dst.Bytes()[last:last+64])
	e.none(s.jfc)
}

// testPostAfterRecv answers a SEND from the poll that finds its receive,
// as a server does.
func testPostAfterRecv(t *testing.T, e *env) {
	g := e.replyRig()
	copy(g.src.Bytes(), "ping")
	copy(g.rb.Bytes()[32:], "pong")
	crs := make([]jetty.CR, 4)
	for i := range 3 {
		require.NoError(t, g.r.jfr.Recv(g.rb.SGE(0, 16), uint64(10+i)))
		require.NoError(t, g.backJFR.Recv(g.ab.SGE(0, 16), uint64(20+i)))
		require.NoError(t, g.ping.Post())
		n, err := e.postAfter(g.pong, g.r.jfc, crs)
		require.NoError(t, err)
		require.Equal(t, 1, n, "%v", crs[:n])
		require.Equal(t, uint64(10+i), crs[0].UserCtx, "the ping's receive")
		require.Equal(t, "ping", string(g.rb.Bytes()[:4]))
		require.Equal(t, uint64(70), e.pollOK(g.backJFC).UserCtx, "the pong was posted")
		require.Equal(t, uint64(20+i), e.pollOK(g.backRecvJFC).UserCtx)
		require.Equal(t, "pong", string(g.ab.Bytes()[:4]))
		e.pollOK(g.s.jfc)
	}
}

// replyRig is a ping from the initiator to the target and a prepared pong
// back, each way with its own queues: the pong's JFS and JFR on the
// target with their JFCs, the way back's JFR on the initiator.
type replyRig struct {
	s                    sendSide
	r                    recvSide
	backJFR              *jetty.JFR
	backJFC, backRecvJFC *jetty.JFC
	src, rb, ab          *segment.Segment
	ping, pong           *jetty.Prepared
}

func (e *env) replyRig() replyRig {
	g := replyRig{s: e.sender(jetty.JFSConfig{}), r: e.receiver(jetty.JFRConfig{})}
	g.backRecvJFC = e.jfc(e.a, 0)
	var err error
	g.backJFR, err = jetty.NewJFR(e.a, jetty.JFRConfig{JFC: g.backRecvJFC})
	require.NoError(e.t, err)
	backRemote, err := jetty.ImportJFR(e.t.Context(), e.b, g.backJFR.Descriptor(), 0)
	require.NoError(e.t, err)
	g.backJFC = e.jfc(e.b, 0)
	backJFS, err := jetty.NewJFS(e.b, jetty.JFSConfig{JFC: g.backJFC})
	require.NoError(e.t, err)
	g.src, g.rb, g.ab = e.seg(e.a, 64, segment.LocalOnly), e.seg(e.b, 64, segment.LocalOnly), e.seg(e.a, 64, segment.LocalOnly)
	g.ping = e.prepare(g.s, jetty.WR{Opcode: urma.OpSend, Flags: jetty.Signaled, To: g.r.remote,
		Local: []segment.SGE{g.src.SGE(0, 4)}})
	g.pong, err = backJFS.Prepare(jetty.WR{Opcode: urma.OpSend, Flags: jetty.Signaled, To: backRemote,
		Local: []segment.SGE{g.rb.SGE(32, 4)}, UserCtx: 70})
	require.NoError(e.t, err)
	return g
}

// testPostAfterNotBefore starts the wait of a reply before its message
// is sent: nothing leaves until the message's record is polled.
func testPostAfterNotBefore(t *testing.T, e *env) {
	g := e.replyRig()
	require.NoError(t, g.r.jfr.Recv(g.rb.SGE(0, 16), 10))
	require.NoError(t, g.backJFR.Recv(g.ab.SGE(0, 16), 20))
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	crs := make([]jetty.CR, 4)
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	go func() {
		n, err := g.pong.PostAfter(ctx, g.r.jfc, crs, 0)
		done <- result{n, err}
	}()
	e.none(g.backJFC)     // no pong
	e.none(g.backRecvJFC) // and nothing arrived
	require.NoError(t, g.ping.Post())
	res := <-done
	require.NoError(t, res.err)
	require.Equal(t, 1, res.n, "%v", crs[:res.n])
	require.Equal(t, uint64(10), crs[0].UserCtx, "the ping's receive")
	require.Equal(t, uint64(70), e.pollOK(g.backJFC).UserCtx, "the pong was posted")
	require.Equal(t, uint64(20), e.pollOK(g.backRecvJFC).UserCtx)
	e.pollOK(g.s.jfc)
}

// testPostAfterRefused waits for one request's record and then posts a
// request whose imported target was closed: the record comes back with
// the *PostError that Post gives.
func testPostAfterRefused(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	_, gone := e.remoteSeg(64, rwa)
	_, kept := e.remoteSeg(64, rwa)
	p := e.prepare(s, jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote,
		Local: []segment.SGE{src.SGE(0, 8)}, Remote: gone.SGE(0, 8)})
	first := e.prepare(s, jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, UserCtx: 3,
		Local: []segment.SGE{src.SGE(0, 8)}, Remote: kept.SGE(0, 8)})
	require.NoError(t, gone.Close())
	require.NoError(t, first.Post())
	crs := make([]jetty.CR, 4)
	n, err := e.postAfter(p, s.jfc, crs)
	var pe *jetty.PostError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 1, n, "%v", crs[:n])
	require.Equal(t, urma.CRSuccess, crs[0].Status, "%v", crs[0])
	require.Equal(t, uint64(3), crs[0].UserCtx, "the first WRITE's record")
	errW := s.jfs.Post([]jetty.WR{p.WR()})
	require.Error(t, errW)
	require.Equal(t, urma.StatusOf(errW), urma.StatusOf(err), "PostAfter: %v; Post: %v", err, errW)
	e.none(s.jfc)
}

// testPostAfterFailure waits for the record of a WRITE that fails at
// the target: the queue is in ERROR by then, so the request that
// PostAfter posts next is refused as Post refuses it.
func testPostAfterFailure(t *testing.T, e *env) {
	w := e.writeRig(jetty.JFSConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	_, ok := e.remoteSeg(64, rwa)
	next := e.prepare(w.s, jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: w.r.remote,
		Local: []segment.SGE{src.SGE(0, 8)}, Remote: ok.SGE(0, 8)})
	require.NoError(t, w.dst.Close())
	require.NoError(t, w.p.Post())
	crs := make([]jetty.CR, 4)
	n, err := e.postAfter(next, w.s.jfc, crs)
	require.Equal(t, 1, n, "%v", crs[:n])
	require.NotEqual(t, urma.CRSuccess, crs[0].Status, "the WRITE into a closed segment fails: %v", crs[0])
	var pe *jetty.PostError
	require.ErrorAs(t, err, &pe, "the queue failed with the WRITE")
	errW := w.s.jfs.Post([]jetty.WR{next.WR()})
	require.Equal(t, urma.StatusOf(errW), urma.StatusOf(err), "PostAfter: %v; Post: %v", err, errW)
}

// testPostAfterStopped ends a wait with nothing to find: PostAfter
// returns the context's error, and the request was not posted.
func testPostAfterStopped(t *testing.T, e *env) {
	w := e.writeRig(jetty.JFSConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	crs := make([]jetty.CR, 4)
	n, err := w.p.PostAfter(ctx, w.s.jfc, crs, 0)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, n)
	e.none(w.s.jfc)
	require.NoError(t, w.p.Post())
	e.pollOK(w.s.jfc)
}
