package providertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

var eventTests = []test{
	{"wait times out", testWaitTimeout},
	{"rearm with unread records", testRearmUnread},
	{"wait returns the JFC with the event", testWaitWhich},
	{"blocked wait wakes on completion", testWaitWakes},
	{"solicited-only arm", testSolicited},
	{"JFC.Wait on a shared JFCE", testSharedJFCE},
	{"close with unacked events", testCloseUnacked},
}

func (e *env) eventJFC(ctx *urma.Context, jfce *jetty.JFCE) *jetty.JFC {
	j, err := jetty.NewJFC(ctx, jetty.JFCConfig{JFCE: jfce, ModerationCount: 1, ModerationPeriod: time.Microsecond})
	require.NoError(e.t, err)
	return j
}

// within is a context that ends d from now, canceled when the test ends.
func (e *env) within(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	e.t.Cleanup(cancel)
	return ctx
}

// expired is a context whose deadline has passed: a wait with it only
// checks.
func (e *env) expired() context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	e.t.Cleanup(cancel)
	return ctx
}

func (e *env) jfce(ctx *urma.Context) *jetty.JFCE {
	j, err := jetty.NewJFCE(ctx)
	require.NoError(e.t, err)
	return j
}

func testWaitTimeout(t *testing.T, e *env) {
	ce := e.jfce(e.a)
	jfc := e.eventJFC(e.a, ce)
	require.NoError(t, jfc.Rearm(false))
	out := make([]*jetty.JFC, 1)
	_, err := ce.Wait(e.within(20*time.Millisecond), out)
	require.ErrorIs(t, err, urma.ErrTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded, "one convention: a deadline is both")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = ce.Wait(canceled, out)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, urma.ErrTimeout, "a cancel is not a timeout")
	_, err = e.a.GetAsyncEvent(e.within(10 * time.Millisecond))
	require.ErrorIs(t, err, urma.ErrTimeout, "async event wait")
	require.ErrorIs(t, err, context.DeadlineExceeded, "async event wait")
	_, err = ce.Wait(e.expired(), out)
	require.ErrorIs(t, err, urma.ErrTimeout)
	require.ErrorIs(t, jfc.Wait(e.within(10*time.Millisecond)), urma.ErrTimeout)
}

func testRearmUnread(t *testing.T, e *env) {
	ce := e.jfce(e.a)
	jfc := e.eventJFC(e.a, ce)
	s := e.sender(jetty.JFSConfig{JFC: jfc})
	require.NoError(t, s.jfs.NOP(0, 1))
	require.ErrorIs(t, jfc.Rearm(false), urma.ErrAgain)
	e.pollOK(jfc)
	require.NoError(t, jfc.Rearm(false))
	require.NoError(t, jfc.Modify(4, time.Millisecond))
}

func testWaitWhich(t *testing.T, e *env) {
	ce := e.jfce(e.a)
	j1, j2 := e.eventJFC(e.a, ce), e.eventJFC(e.a, ce)
	s1 := e.sender(jetty.JFSConfig{JFC: j1})
	s2 := e.sender(jetty.JFSConfig{JFC: j2})
	require.NoError(t, j1.Rearm(false))
	require.NoError(t, j2.Rearm(false))
	require.NoError(t, s2.jfs.NOP(0, 2))
	out := make([]*jetty.JFC, 2)
	n, err := ce.Wait(e.within(e.timeout), out)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Same(t, j2, out[0])
	require.NoError(t, j2.Ack(1))
	require.Equal(t, uint64(2), e.pollOK(j2).UserCtx)
	// The event fired once: more records without a rearm raise none.
	require.NoError(t, s2.jfs.NOP(0, 3))
	_, err = ce.Wait(e.within(20*time.Millisecond), out)
	require.ErrorIs(t, err, urma.ErrTimeout)
	require.NoError(t, s1.jfs.NOP(0, 1))
	n, err = ce.Wait(e.within(e.timeout), out)
	require.NoError(t, err)
	require.Same(t, j1, out[0])
	require.NoError(t, j1.Ack(n))
}

func testWaitWakes(t *testing.T, e *env) {
	ce := e.jfce(e.b)
	rjfc := e.eventJFC(e.b, ce)
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{JFC: rjfc})
	rb := e.seg(e.b, 64, segment.LocalOnly)
	l := e.seg(e.a, 64, segment.LocalOnly)
	require.NoError(t, r.jfr.Recv(rb.SGE(0, 64), 1))
	require.NoError(t, rjfc.Rearm(false))
	done := make(chan error, 1)
	go func() { done <- rjfc.Wait(e.within(e.timeout)) }()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("wait returned before any completion: %v", err)
	default:
	}
	require.NoError(t, s.jfs.Send(r.remote, l.SGE(0, 8), 0, 2))
	require.NoError(t, <-done)
	require.Equal(t, uint64(1), e.pollOK(rjfc).UserCtx)
}

func testSolicited(t *testing.T, e *env) {
	ce := e.jfce(e.b)
	rjfc := e.eventJFC(e.b, ce)
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{JFC: rjfc})
	rb := e.seg(e.b, 64, segment.LocalOnly)
	l := e.seg(e.a, 64, segment.LocalOnly)
	require.NoError(t, r.jfr.PostRecv([]jetty.RecvWR{{UserCtx: 1, Local: []segment.SGE{rb.SGE(0, 32)}},
		{UserCtx: 2, Local: []segment.SGE{rb.SGE(32, 32)}}}))
	require.NoError(t, rjfc.Rearm(true))
	require.NoError(t, s.jfs.Send(r.remote, l.SGE(0, 8), 0, 1))
	if !e.attr.SolicitedEvents {
		// The arm covers every record: the unsolicited message wakes.
		require.NoError(t, rjfc.Wait(e.within(e.timeout)), "device arms for any record")
		require.Equal(t, uint64(1), e.pollOK(rjfc).UserCtx)
		require.NoError(t, rjfc.Rearm(true))
		require.NoError(t, s.jfs.Send(r.remote, l.SGE(0, 8), jetty.Solicited, 2))
		require.NoError(t, rjfc.Wait(e.within(e.timeout)))
		require.Equal(t, uint64(2), e.pollOK(rjfc).UserCtx)
		return
	}
	require.ErrorIs(t, rjfc.Wait(e.within(30*time.Millisecond)), urma.ErrTimeout, "unsolicited message raised an event")
	require.NoError(t, s.jfs.Send(r.remote, l.SGE(0, 8), jetty.Solicited, 2))
	require.NoError(t, rjfc.Wait(e.within(e.timeout)))
	crs := e.poll(rjfc, 2)
	require.Zero(t, crs[0].Flags&jetty.CRSolicited)
	if e.attr.SolicitedInCR {
		require.NotZero(t, crs[1].Flags&jetty.CRSolicited)
	} else {
		require.Zero(t, crs[1].Flags&jetty.CRSolicited, "device declares no solicited flag in records")
	}
}

// testSharedJFCE: JFCs that share a JFCE each have a waiter of their own
// (JFC.Wait, PollWait), and each waiter gets its own JFC's events, acked.
func testSharedJFCE(t *testing.T, e *env) {
	ce := e.jfce(e.a)
	j1, j2 := e.eventJFC(e.a, ce), e.eventJFC(e.a, ce)
	s1 := e.sender(jetty.JFSConfig{JFC: j1})
	s2 := e.sender(jetty.JFSConfig{JFC: j2})
	require.NoError(t, j1.Rearm(false))
	require.NoError(t, j2.Rearm(false))
	w1, w2 := make(chan error, 1), make(chan error, 1)
	go func() { w1 <- j1.Wait(e.within(e.timeout)) }()
	go func() {
		crs := make([]jetty.CR, 1)
		_, err := j2.PollWait(e.within(e.timeout), crs, 0)
		if err == nil && crs[0].UserCtx != 2 {
			err = fmt.Errorf("PollWait of the second JFC got %v", crs[0])
		}
		w2 <- err
	}()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, s2.jfs.NOP(0, 2)) // the second JFC's first
	require.NoError(t, <-w2)
	select {
	case err := <-w1:
		t.Fatalf("the first JFC's waiter returned with no event of its own: %v", err)
	default:
	}
	require.NoError(t, s1.jfs.NOP(0, 1))
	require.NoError(t, <-w1)
	require.Equal(t, uint64(1), e.pollOK(j1).UserCtx)
	require.ErrorIs(t, e.jfc(e.a, 0).Wait(e.within(time.Millisecond)), urma.ErrInvalid, "polling-mode JFC")
	// Every event was acknowledged by its waiter: both JFCs close.
	require.NoError(t, s1.jfs.Close())
	require.NoError(t, s2.jfs.Close())
	require.NoError(t, j1.Close())
	require.NoError(t, j2.Close())
}

func testCloseUnacked(t *testing.T, e *env) {
	ce := e.jfce(e.a)
	jfc := e.eventJFC(e.a, ce)
	s := e.sender(jetty.JFSConfig{JFC: jfc})
	require.NoError(t, jfc.Rearm(false))
	require.NoError(t, s.jfs.NOP(0, 1))
	out := make([]*jetty.JFC, 1)
	_, err := ce.Wait(e.within(e.timeout), out)
	require.NoError(t, err)
	require.NoError(t, s.jfs.Close())
	require.ErrorIs(t, jfc.Close(), urma.ErrBusy)
	require.NoError(t, jfc.Ack(1))
	require.NoError(t, jfc.Close())
	require.NoError(t, ce.Close())
}
