package providertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Prepared.PostWhen must post the request after the flag holds the value
// and never before, post it as Post would, and post nothing when its wait
// ends.
var postWhenTests = []test{
	{"posts once a WRITE sets the flag", testPostWhenFlag},
	{"a flag already set posts at once", testPostWhenAlreadySet},
	{"a wait that ends posts nothing", testPostWhenStopped},
	{"a nil flag is refused", testPostWhenNilFlag},
	{"a refused post is Post's refusal", testPostWhenRefused},
}

// flagRig is an answer WRITE that waits for a flag, and a WRITE that sets
// the flag, on one queue. The flag is byte 7 of a segment of the target
// side, which the initiator's WRITE lands in as a peer's would.
type flagRig struct {
	s       sendSide
	answer  *jetty.Prepared
	setFlag *jetty.Prepared
	flag    *byte
	dst     *segment.Segment // where the answer lands
	dstTg   *segment.Target
}

const flagValue = 9

func (e *env) flagRig() flagRig {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	src := e.seg(e.a, 64, segment.LocalOnly)
	copy(src.Bytes(), "answer!!")
	src.Bytes()[8] = flagValue
	dst, dstTg := e.remoteSeg(64, rwa)
	flagSeg, flagTg := e.remoteSeg(64, rwa)
	return flagRig{
		s: s,
		answer: e.prepare(s, jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, UserCtx: 1,
			Local: []segment.SGE{src.SGE(0, 8)}, Remote: dstTg.SGE(0, 8)}),
		setFlag: e.prepare(s, jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: r.remote, UserCtx: 2,
			Local: []segment.SGE{src.SGE(8, 1)}, Remote: flagTg.SGE(7, 1)}),
		flag:  &flagSeg.Bytes()[7],
		dst:   dst,
		dstTg: dstTg,
	}
}

// postWhen is PostWhen with the env's timeout, which fails the test.
func (e *env) postWhen(p *jetty.Prepared, flag *byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	err := p.PostWhen(ctx, flag, flagValue)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// testPostWhenFlag starts the wait before the flag is set: nothing is
// posted until a WRITE sets it, and then the answer is.
func testPostWhenFlag(t *testing.T, e *env) {
	f := e.flagRig()
	done := make(chan error, 1)
	go func() { done <- e.postWhen(f.answer, f.flag) }()
	select {
	case err := <-done:
		t.Fatalf("PostWhen returned before the flag was set: %v", err)
	case <-time.After(30 * time.Millisecond):
	}
	e.none(f.s.jfc)
	require.Equal(t, make([]byte, 8), f.dst.Bytes()[:8], "nothing was written before the flag")
	require.NoError(t, f.setFlag.Post())
	require.NoError(t, <-done)
	crs := e.poll(f.s.jfc, 2)
	require.Equal(t, []uint64{2, 1}, []uint64{crs[0].UserCtx, crs[1].UserCtx}, "the flag's WRITE, then the answer")
	for _, cr := range crs {
		require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
	}
	require.Equal(t, "answer!!", string(f.dst.Bytes()[:8]))
}

// testPostWhenAlreadySet finds the flag set: the answer leaves at once,
// and a second PostWhen on the same flag posts it again.
func testPostWhenAlreadySet(t *testing.T, e *env) {
	f := e.flagRig()
	require.NoError(t, f.setFlag.Post())
	require.Equal(t, uint64(2), e.pollOK(f.s.jfc).UserCtx)
	for range 2 {
		require.NoError(t, e.postWhen(f.answer, f.flag))
		require.Equal(t, uint64(1), e.pollOK(f.s.jfc).UserCtx)
	}
	require.Equal(t, "answer!!", string(f.dst.Bytes()[:8]))
	e.none(f.s.jfc)
}

// testPostWhenStopped ends the wait before the flag is set: PostWhen
// returns the context's error and posts nothing; a later Post works.
func testPostWhenStopped(t *testing.T, e *env) {
	f := e.flagRig()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, f.answer.PostWhen(ctx, f.flag, flagValue), context.DeadlineExceeded)
	e.none(f.s.jfc)
	require.Equal(t, make([]byte, 8), f.dst.Bytes()[:8])
	require.NoError(t, f.answer.Post())
	require.Equal(t, uint64(1), e.pollOK(f.s.jfc).UserCtx)
}

// testPostWhenNilFlag is bad input: an error, and nothing posted.
func testPostWhenNilFlag(t *testing.T, e *env) {
	f := e.flagRig()
	err := f.answer.PostWhen(context.Background(), nil, flagValue)
	var pe *jetty.PostError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, urma.ErrInvalid)
	e.none(f.s.jfc)
}

// testPostWhenRefused sets the flag for an answer whose imported target
// was closed: PostWhen returns the *PostError that Post gives.
func testPostWhenRefused(t *testing.T, e *env) {
	f := e.flagRig()
	require.NoError(t, f.dstTg.Close())
	require.NoError(t, f.setFlag.Post())
	require.Equal(t, uint64(2), e.pollOK(f.s.jfc).UserCtx)
	err := e.postWhen(f.answer, f.flag)
	var pe *jetty.PostError
	require.ErrorAs(t, err, &pe)
	errP := f.answer.Post()
	require.Error(t, errP)
	require.Equal(t, urma.StatusOf(errP), urma.StatusOf(err), "PostWhen: %v; Post: %v", err, errP)
	e.none(f.s.jfc)
}
