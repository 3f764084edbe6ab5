package providertest

import (
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
	_, err := ce.Wait(20*time.Millisecond, out)
	require.ErrorIs(t, err, urma.ErrTimeout)
	_, err = ce.Wait(0, out)
	require.ErrorIs(t, err, urma.ErrTimeout)
	require.ErrorIs(t, jfc.Wait(10*time.Millisecond), urma.ErrTimeout)
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
	n, err := ce.Wait(e.timeout, out)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Same(t, j2, out[0])
	require.NoError(t, j2.Ack(1))
	require.Equal(t, uint64(2), e.pollOK(j2).UserCtx)
	// The event fired once: more records without a rearm raise none.
	require.NoError(t, s2.jfs.NOP(0, 3))
	_, err = ce.Wait(20*time.Millisecond, out)
	require.ErrorIs(t, err, urma.ErrTimeout)
	require.NoError(t, s1.jfs.NOP(0, 1))
	n, err = ce.Wait(e.timeout, out)
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
	go func() { done <- rjfc.Wait(e.timeout) }()
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
	require.NoError(t, r.jfr.PostRecv([]jetty.RecvWR{{UserCtx: 1, Local: []jetty.SGE{rb.SGE(0, 32)}},
		{UserCtx: 2, Local: []jetty.SGE{rb.SGE(32, 32)}}}))
	require.NoError(t, rjfc.Rearm(true))
	require.NoError(t, s.jfs.Send(r.remote, l.SGE(0, 8), 0, 1))
	if !e.attr.SolicitedEvents {
		// The arm covers every record: the unsolicited message wakes.
		require.NoError(t, rjfc.Wait(e.timeout), "device arms for any record")
		require.Equal(t, uint64(1), e.pollOK(rjfc).UserCtx)
		require.NoError(t, rjfc.Rearm(true))
		require.NoError(t, s.jfs.Send(r.remote, l.SGE(0, 8), jetty.Solicited, 2))
		require.NoError(t, rjfc.Wait(e.timeout))
		require.Equal(t, uint64(2), e.pollOK(rjfc).UserCtx)
		return
	}
	require.ErrorIs(t, rjfc.Wait(30*time.Millisecond), urma.ErrTimeout, "unsolicited message raised an event")
	require.NoError(t, s.jfs.Send(r.remote, l.SGE(0, 8), jetty.Solicited, 2))
	require.NoError(t, rjfc.Wait(e.timeout))
	crs := e.poll(rjfc, 2)
	require.Zero(t, crs[0].Flags&jetty.CRSolicited)
	if e.attr.SolicitedInCR {
		require.NotZero(t, crs[1].Flags&jetty.CRSolicited)
	} else {
		require.Zero(t, crs[1].Flags&jetty.CRSolicited, "device declares no solicited flag in records")
	}
}

func testSharedJFCE(t *testing.T, e *env) {
	ce := e.jfce(e.a)
	j1 := e.eventJFC(e.a, ce)
	e.eventJFC(e.a, ce)
	require.ErrorIs(t, j1.Wait(time.Millisecond), urma.ErrInvalid)
	require.ErrorIs(t, e.jfc(e.a, 0).Wait(time.Millisecond), urma.ErrInvalid, "polling-mode JFC")
}

func testCloseUnacked(t *testing.T, e *env) {
	ce := e.jfce(e.a)
	jfc := e.eventJFC(e.a, ce)
	s := e.sender(jetty.JFSConfig{JFC: jfc})
	require.NoError(t, jfc.Rearm(false))
	require.NoError(t, s.jfs.NOP(0, 1))
	out := make([]*jetty.JFC, 1)
	_, err := ce.Wait(e.timeout, out)
	require.NoError(t, err)
	require.NoError(t, s.jfs.Close())
	require.ErrorIs(t, jfc.Close(), urma.ErrBusy)
	require.NoError(t, jfc.Ack(1))
	require.NoError(t, jfc.Close())
	require.NoError(t, ce.Close())
}
