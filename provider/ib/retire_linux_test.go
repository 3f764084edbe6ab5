//go:build cgo && urma_verbs

package ib

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	jt "github.com/urma-go/sdk/jetty"
	sg "github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
)

// TestReplacedConnectionReportsItsRequests covers a connection dropped
// while a SEND runs on it (acceptBind replacing it when the peer binds
// again, or a broken one dropped at the next post). Dropping disconnects
// and destroys the QP; when the destroy comes before the device flushed
// the SEND, no completion will ever come, and under load that lost a soak
// run's requests for good. connGone must give the request its record then
// (an error; the Jetty goes to ERROR), and the flush that may still come
// must not give it a second one. The test calls connGone while the QP
// still runs the SEND, which makes both happen every time.
func TestReplacedConnectionReportsItsRequests(t *testing.T) {
	ca, jfcA, ja := waitingSend(t)
	crs := make([]jt.CR, 4)
	time.Sleep(100 * time.Millisecond)
	n, err := jfcA.Poll(crs)
	require.NoError(t, err)
	require.Zero(t, n, "the SEND completed without a receive: %v", crs[:n])

	var aj *jetty
	c := ca.Raw().(*ibContext)
	c.mu.Lock()
	for o := range c.objects.All() {
		if j, ok := o.(*jetty); ok && j.id == ja.Descriptor().ID.ID {
			aj = j
		}
	}
	c.mu.Unlock()
	require.NotNil(t, aj, "jetty %d among the context's objects", ja.Descriptor().ID.ID)
	aj.sq.mu.Lock()
	aj.sq.connGone(aj.conn())
	aj.sq.mu.Unlock()

	deadline := time.Now().Add(10 * time.Second)
	for n == 0 && time.Now().Before(deadline) {
		n, err = jfcA.Poll(crs)
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, 1, n, "records of the SEND whose connection was replaced: %v", crs[:n])
	require.Equal(t, uint64(1), crs[0].UserCtx)
	require.Equal(t, urma.CRRemAccessAbortErr, crs[0].Status, "%v", crs[0])
	a, err := ja.Query()
	require.NoError(t, err)
	require.Equal(t, urma.StateError, a.State)
	require.Zero(t, a.Outstanding, "slots still held after the record was polled")
	// The queue's move to ERROR flushed the SEND on the device as well.
	time.Sleep(200 * time.Millisecond)
	n, err = jfcA.Poll(crs)
	require.NoError(t, err)
	require.Zero(t, n, "a second record of the SEND: %v", crs[:n])
}

// TestBindFromBothEndsKeepsOneConnection binds two Jetties to each other
// from both ends at once, many times: the ends must settle on one
// connection (one QP each side), not each keep the one it dialed with the
// other's left over.
func TestBindFromBothEndsKeepsOneConnection(t *testing.T) {
	env := vm.Require(t)
	dev, err := urma.DeviceByName(env.RXE.Name)
	require.NoError(t, err)
	ctxs := make([]*urma.Context, 2)
	for i := range ctxs {
		ctxs[i], err = urma.Open(dev, 0, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = ctxs[i].Close() })
	}
	conns := func(c *urma.Context) int {
		s := c.Raw().(*ibContext).cm
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.conns)
	}
	for round := range 10 {
		js := make([]*jt.Jetty, 2)
		for i, c := range ctxs {
			jfc, err := jt.NewJFC(c, jt.JFCConfig{}) // the depth of both of the Jetty's queues
			require.NoError(t, err)
			js[i], err = jt.NewJetty(c, jt.JettyConfig{Send: jt.JFSConfig{Mode: urma.RC, JFC: jfc}})
			require.NoError(t, err)
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range js {
			r, err := jt.ImportJetty(context.Background(), ctxs[i], js[1-i].Descriptor(), 0)
			require.NoError(t, err)
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = js[i].Bind(context.Background(), r) }()
		}
		wg.Wait()
		require.NoError(t, errs[0], "round %d", round)
		require.NoError(t, errs[1], "round %d", round)
		for i, c := range ctxs {
			require.Equal(t, 1, conns(c), "round %d: connections of context %d", round, i)
		}
		for _, j := range js {
			require.NoError(t, j.Close())
		}
		for i, c := range ctxs {
			require.Zero(t, conns(c), "round %d: connections of context %d after close", round, i)
		}
	}
}

// TestUnbindReportsTheRunningRequest unbinds a Jetty while its SEND waits
// for a receive: the SEND must end with an error record, whichever comes
// first, the device's flush or the QP's destruction.
func TestUnbindReportsTheRunningRequest(t *testing.T) {
	for round := range 5 {
		_, jfc, ja := waitingSend(t)
		time.Sleep(20 * time.Millisecond)
		require.NoError(t, ja.Unbind())
		crs := make([]jt.CR, 4)
		var n int
		var err error
		for deadline := time.Now().Add(10 * time.Second); n == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			n, err = jfc.Poll(crs)
			require.NoError(t, err)
		}
		require.Equal(t, 1, n, "round %d: records of the SEND running at Unbind", round)
		require.NotEqual(t, urma.CRSuccess, crs[0].Status, "round %d: %v", round, crs[0])
	}
}

// waitingSend binds an RC Jetty of a new context to one of another and
// posts a SEND (user context 1) that waits in RNR retries for ever, since
// the peer posts no receive. It returns the first context, its JFC and its
// Jetty; both contexts close when the test ends.
func waitingSend(t *testing.T) (*urma.Context, *jt.JFC, *jt.Jetty) {
	env := vm.Require(t)
	dev, err := urma.DeviceByName(env.RXE.Name)
	require.NoError(t, err)
	open := func() (*urma.Context, *jt.JFC, *jt.Jetty) {
		c, err := urma.Open(dev, 0, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		jfc, err := jt.NewJFC(c, jt.JFCConfig{}) // the depth of both of the Jetty's queues
		require.NoError(t, err)
		j, err := jt.NewJetty(c, jt.JettyConfig{Send: jt.JFSConfig{Mode: urma.RC, JFC: jfc, RNRRetry: 7}})
		require.NoError(t, err)
		return c, jfc, j
	}
	ca, jfc, ja := open()
	_, _, jb := open()
	rb, err := jt.ImportJetty(context.Background(), ca, jb.Descriptor(), 0)
	require.NoError(t, err)
	require.NoError(t, ja.Bind(context.Background(), rb))
	seg, err := sg.Alloc(ca, 64, sg.Config{Access: sg.LocalOnly})
	require.NoError(t, err)
	require.NoError(t, ja.Send(nil, seg.SGE(0, 8), 0, 1))
	return ca, jfc, ja
}
