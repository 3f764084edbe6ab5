package rdmacm

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
)

func TestLoopbackHasNoRDMACM(t *testing.T) {
	dev, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	ctx, err := urma.Open(dev, 0, nil)
	require.NoError(t, err)
	defer ctx.Close()
	jfc, err := jetty.NewJFC(ctx, jetty.JFCConfig{Depth: 8})
	require.NoError(t, err)
	defer jfc.Close()
	j, err := jetty.NewJetty(ctx, jetty.JettyConfig{Send: jetty.JFSConfig{Depth: 4, Mode: urma.RC, JFC: jfc}, Recv: jetty.JFRConfig{Depth: 4}})
	require.NoError(t, err)
	defer j.Close()

	_, err = Dial(context.Background(), j, "127.0.0.1:7174")
	require.ErrorIs(t, err, urma.ErrNotSupported)
	assert.Contains(t, err.Error(), "loopback/loopback0 has no rdma_cm")
	_, err = Listen(ctx, ":0")
	require.ErrorIs(t, err, urma.ErrNotSupported)
	_, err = Listen(nil, ":0")
	require.ErrorIs(t, err, urma.ErrInvalid)
	_, err = Dial(context.Background(), nil, "127.0.0.1:7174")
	require.ErrorIs(t, err, urma.ErrInvalid)
	// The Jetty is untouched: it still binds to URMA peers.
	q, err := j.Query()
	require.NoError(t, err)
	assert.Equal(t, urma.StateReady, q.State)
}

func TestParseAddr(t *testing.T) {
	for _, c := range []struct {
		in     string
		listen bool
		want   string
	}{
		{"169.254.77.1:7174", false, "169.254.77.1:7174"},
		{"[fe80::1]:9", false, "[fe80::1]:9"},
		{":0", true, "0.0.0.0:0"},
		{"10.0.0.1:0", true, "10.0.0.1:0"},
	} {
		got, err := parseAddr(c.in, c.listen)
		require.NoError(t, err, c.in)
		assert.Equal(t, netip.MustParseAddrPort(c.want), got, c.in)
	}
	for _, c := range []struct {
		in     string
		listen bool
		why    string
	}{
		{"169.254.77.1", false, "missing port"},
		{"10.0.0.1:0", false, "port must be 1..65535"},
		{"10.0.0.1:70000", true, "port must be 1..65535"},
		{":7174", false, "names no host"},
		{"localhost:7174", false, "host must be an IP address"},
	} {
		_, err := parseAddr(c.in, c.listen)
		require.ErrorIs(t, err, urma.ErrInvalid, c.in)
		assert.Contains(t, err.Error(), c.why, c.in)
	}
}
