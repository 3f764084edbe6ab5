//go:build cgo && urma_verbs

package urmanet_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/nettest"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/urmanet"

	_ "github.com/urma-go/sdk/provider/ib"
)

// openVerbs opens a context on the first EID of the guest's device d,
// closed with the test.
func openVerbs(t testing.TB, d vm.Device) *urma.Context {
	t.Helper()
	dev, err := urma.DeviceByName(d.Name)
	require.NoError(t, err)
	c, err := urma.Open(dev, 0, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// verbsPipe listens at server, dials from client and returns both ends and
// a stop that closes them and the listener.
func verbsPipe(server, client *urma.Context) (net.Conn, net.Conn, func(), error) {
	l, err := urmanet.Listen(server, ":0")
	if err != nil {
		return nil, nil, nil, err
	}
	type res struct {
		c   net.Conn
		err error
	}
	acc := make(chan res, 1)
	go func() { c, err := l.Accept(); acc <- res{c, err} }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d, err := urmanet.Dial(ctx, client, l.Addr().String())
	if err != nil {
		l.Close()
		<-acc
		return nil, nil, nil, err
	}
	r := <-acc
	if r.err != nil {
		d.Close()
		l.Close()
		return nil, nil, nil, r.err
	}
	return d, r.c, func() { d.Close(); r.c.Close(); l.Close() }, nil
}

// TestVerbsNettestConn runs x/net's net.Conn conformance over urmanet on
// Soft-RoCE and soft-iWARP in the guest, between two contexts on the
// device's first EID.
func TestVerbsNettestConn(t *testing.T) {
	env := vm.Require(t)
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		t.Run(d.Name, func(t *testing.T) {
			server, client := openVerbs(t, d), openVerbs(t, d)
			nettest.TestConn(t, func() (net.Conn, net.Conn, func(), error) {
				return verbsPipe(server, client)
			})
		})
	}
}

// TestVerbsPorts checks provider.Ports on ib: a published port resolves
// from another context and from the publisher; a port is held once per
// address, a context's UASID included, and resolving one gives
// ErrNotFound; a closed publication, or one of a closed context, is gone.
func TestVerbsPorts(t *testing.T) {
	env := vm.Require(t)
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		t.Run(d.Name, func(t *testing.T) {
			server, client := openVerbs(t, d), openVerbs(t, d)
			sp, ok := server.Raw().(provider.Ports)
			require.True(t, ok, "ib contexts implement provider.Ports")
			cp := client.Raw().(provider.Ports)
			eid := provider.EID(server.EID())
			desc := provider.JettyDesc{ID: provider.JettyID{EID: eid, UASID: server.UASID(), ID: 1},
				Kind: provider.KindJetty, Mode: provider.RM}
			const port = 7000

			_, err := sp.PublishPort(0, desc, 1)
			require.ErrorIs(t, err, provider.ErrInvalid)
			_, err = sp.PublishPort(port, provider.JettyDesc{Kind: 99}, 1)
			require.ErrorIs(t, err, provider.ErrInvalid)
			pub, err := sp.PublishPort(port, desc, 0xfeed)
			require.NoError(t, err)
			_, err = sp.PublishPort(port, desc, 1)
			require.ErrorIs(t, err, provider.ErrExist)
			_, err = cp.PublishPort(port, desc, 1)
			require.ErrorIs(t, err, provider.ErrExist, "one publication per address, whichever context")
			_, err = cp.PublishPort(uint16(server.UASID()), desc, 1)
			require.ErrorIs(t, err, provider.ErrExist, "a context's UASID is its listener's port")

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, p := range []provider.Ports{cp, sp} {
				got, token, err := p.ResolvePort(ctx, eid, port)
				require.NoError(t, err)
				require.Equal(t, desc, got)
				require.Equal(t, uint32(0xfeed), token)
			}
			_, _, err = cp.ResolvePort(ctx, eid, uint16(server.UASID()))
			require.ErrorIs(t, err, provider.ErrNotFound, "a UASID publishes nothing")
			start := time.Now()
			_, _, err = cp.ResolvePort(ctx, eid, port+1)
			require.ErrorIs(t, err, provider.ErrNotFound, "nothing listens")
			require.Less(t, time.Since(start), 5*time.Second)
			done, stop := context.WithCancel(ctx)
			stop()
			_, _, err = cp.ResolvePort(done, eid, port)
			require.ErrorIs(t, err, context.Canceled)

			require.NoError(t, pub.Close())
			require.NoError(t, pub.Close(), "Close is idempotent")
			_, _, err = cp.ResolvePort(ctx, eid, port)
			require.ErrorIs(t, err, provider.ErrNotFound, "unpublished")

			pub, err = cp.PublishPort(port, desc, 0xbeef)
			require.NoError(t, err, "the port is free again")
			_, token, err := sp.ResolvePort(ctx, eid, port)
			require.NoError(t, err)
			require.Equal(t, uint32(0xbeef), token)
			require.NoError(t, client.Close())
			_, _, err = sp.ResolvePort(ctx, eid, port)
			require.ErrorIs(t, err, provider.ErrNotFound, "a closed context's ports are gone")
			require.NoError(t, pub.Close())
		})
	}
}
