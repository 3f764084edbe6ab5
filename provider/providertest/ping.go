package providertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/urma"
)

// A context answers a ping that names it by EID and UASID, through its
// provider alone: the target's application does nothing here.
var pingTests = []test{
	{"by UASID", testPingUASID},
	{"size bounds", testPingSize},
	{"closed target", testPingClosed},
	{"done context", testPingDone},
}

func (e *env) pingTarget(size int) *urma.PingOptions {
	return &urma.PingOptions{UASID: e.b.UASID(), Size: size}
}

func (e *env) pingCtx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	e.t.Cleanup(cancel)
	return ctx
}

func testPingUASID(t *testing.T, e *env) {
	for _, size := range []int{0, 1, e.a.MaxPingSize()} {
		rtt, err := e.a.Ping(e.pingCtx(), e.b.EID(), e.pingTarget(size))
		require.NoError(t, err, "%d bytes", size)
		require.Positive(t, rtt)
	}
	_, err := e.b.Ping(e.pingCtx(), e.a.EID(), &urma.PingOptions{UASID: e.a.UASID()})
	require.NoError(t, err, "the other way")
}

func testPingSize(t *testing.T, e *env) {
	require.Positive(t, e.a.MaxPingSize())
	for _, size := range []int{-1, e.a.MaxPingSize() + 1} {
		_, err := e.a.Ping(e.pingCtx(), e.b.EID(), e.pingTarget(size))
		require.ErrorIs(t, err, urma.ErrInvalid, "%d bytes", size)
	}
}

func testPingClosed(t *testing.T, e *env) {
	opts := e.pingTarget(0)
	require.NoError(t, e.b.Close())
	_, err := e.a.Ping(e.pingCtx(), e.b.EID(), opts)
	require.ErrorIs(t, err, urma.ErrNotFound)
	_, err = e.b.Ping(e.pingCtx(), e.a.EID(), &urma.PingOptions{UASID: e.a.UASID()})
	require.ErrorIs(t, err, urma.ErrClosed)
}

func testPingDone(t *testing.T, e *env) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.a.Ping(ctx, e.b.EID(), e.pingTarget(0))
	require.ErrorIs(t, err, context.Canceled)
}
