//go:build cgo && urma_verbs

package ib

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	jt "github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
)

// TestErrTimeoutIsTheAckTimeout binds two RC Jetties with different
// ErrTimeouts and reads each one's QP: the dialing side's and the
// accepting side's connection each carry their own queue's err_timeout
// code as the ACK timeout.
func TestErrTimeoutIsTheAckTimeout(t *testing.T) {
	env := vm.Require(t)
	dev, err := urma.DeviceByName(env.RXE.Name)
	require.NoError(t, err)
	require.True(t, dev.Attr().ErrTimeout)
	open := func(d time.Duration) (*urma.Context, *jt.Jetty) {
		c, err := urma.Open(dev, 0, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		jfc, err := jt.NewJFC(c, jt.JFCConfig{})
		require.NoError(t, err)
		j, err := jt.NewJetty(c, jt.JettyConfig{Send: jt.JFSConfig{Mode: urma.RC, JFC: jfc, ErrTimeout: d}})
		require.NoError(t, err)
		return c, j
	}
	ca, ja := open(500 * time.Millisecond) // 4.096us*2^17 = 537ms
	cb, jb := open(10 * time.Microsecond)  // 4.096us*2^2 = 16us; 2^1 is short of it
	rb, err := jt.ImportJetty(context.Background(), ca, jb.Descriptor(), 0)
	require.NoError(t, err)
	require.NoError(t, ja.Bind(context.Background(), rb))
	qpTimeout := func(c *urma.Context, j *jt.Jetty) uint8 {
		var cn *conn
		require.Eventually(t, func() bool {
			cn = c.Raw().(*ibContext).jettyByID(j.Descriptor().ID.ID).conn()
			return cn != nil
		}, 10*time.Second, time.Millisecond, "the jetty's connection")
		code, err := cn.qp.AckTimeout()
		require.NoError(t, err)
		return code
	}
	require.Equal(t, uint8(17), qpTimeout(ca, ja), "the dialing side")
	require.Equal(t, uint8(2), qpTimeout(cb, jb), "the accepting side")
}

// jettyByID finds a Jetty of the context by its id.
func (c *ibContext) jettyByID(id uint32) *jetty {
	c.mu.Lock()
	defer c.mu.Unlock()
	for o := range c.objects.All() {
		if j, ok := o.(*jetty); ok && j.id == id {
			return j
		}
	}
	return nil
}
