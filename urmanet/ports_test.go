package urmanet_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
)

// TestLoopbackPorts checks the provider mechanism urmanet resolves
// listeners with: a published Jetty is found from another context and
// from the publishing one, a port is held once, and a closed publication
// is gone.
func TestLoopbackPorts(t *testing.T) {
	server, client := openCtx(t, 0), openCtx(t, 1)
	sp, ok := server.Raw().(provider.Ports)
	require.True(t, ok, "loopback contexts implement provider.Ports")
	cp := client.Raw().(provider.Ports)
	jfc, err := jetty.NewJFC(server, jetty.JFCConfig{Depth: 8})
	require.NoError(t, err)
	defer jfc.Close()
	j, err := jetty.NewJetty(server, jetty.JettyConfig{Send: jetty.JFSConfig{Depth: 4, JFC: jfc}, Recv: jetty.JFRConfig{Depth: 4}})
	require.NoError(t, err)
	defer j.Close()
	desc := j.Descriptor().Raw()

	_, err = sp.PublishPort(0, desc, 1)
	require.ErrorIs(t, err, provider.ErrInvalid)
	pub, err := sp.PublishPort(7000, desc, 0xfeed)
	require.NoError(t, err)
	_, err = sp.PublishPort(7000, desc, 1)
	require.ErrorIs(t, err, provider.ErrExist)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	eid := provider.EID(server.EID())
	for _, p := range []provider.Ports{cp, sp} {
		got, token, err := p.ResolvePort(ctx, eid, 7000)
		require.NoError(t, err)
		require.Equal(t, desc, got)
		require.Equal(t, uint32(0xfeed), token)
	}
	_, _, err = cp.ResolvePort(ctx, eid, 7001)
	require.ErrorIs(t, err, provider.ErrNotFound)
	require.NoError(t, pub.Close())
	require.NoError(t, pub.Close())
	_, _, err = cp.ResolvePort(ctx, eid, 7000)
	require.ErrorIs(t, err, provider.ErrNotFound)
}
