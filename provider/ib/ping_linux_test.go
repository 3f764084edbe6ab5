//go:build cgo && urma_verbs

package ib_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
)

// TestPing pings contexts of each guest device: by UASID, a context's
// rdma_cm listener answers; by EID alone, the context that serves pings
// does, and nobody does before it serves. Soft-iWARP's rejects race the
// close of their stream (see TestRepeatedImports); the provider asks again.
func TestPing(t *testing.T) {
	env := vm.Require(t)
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		t.Run(d.Name, func(t *testing.T) {
			dev, err := urma.DeviceByName(d.Name)
			require.NoError(t, err)
			a, err := urma.Open(dev, 0, nil)
			require.NoError(t, err)
			defer a.Close()
			b, err := urma.Open(dev, 0, nil)
			require.NoError(t, err)
			defer b.Close()
			ctx := context.Background()
			require.Equal(t, 16, a.MaxPingSize())

			rtt, err := a.Ping(ctx, b.EID(), &urma.PingOptions{UASID: b.UASID(), Size: 16})
			require.NoError(t, err)
			require.Positive(t, rtt)
			t.Logf("%s: round trip by uasid %v", d.Name, rtt)

			start := time.Now()
			_, err = a.Ping(ctx, b.EID(), nil)
			require.ErrorIs(t, err, urma.ErrNotFound, "nobody listens for pings yet")
			require.Less(t, time.Since(start), 5*time.Second)

			l, err := b.ListenPing()
			require.NoError(t, err)
			_, err = a.Ping(ctx, b.EID(), &urma.PingOptions{Size: 3})
			require.NoError(t, err, "by eid alone")
			_, err = a.ListenPing()
			require.ErrorIs(t, err, urma.ErrExist, "one listener per host")
			require.NoError(t, l.Close())
			require.NoError(t, l.Close(), "Close is idempotent")
			_, err = a.Ping(ctx, b.EID(), nil)
			require.ErrorIs(t, err, urma.ErrNotFound, "nobody serves pings any more")

			_, err = a.Ping(ctx, b.EID(), &urma.PingOptions{Size: 17})
			require.ErrorIs(t, err, urma.ErrInvalid)
			done, cancel := context.WithCancel(ctx)
			cancel()
			_, err = a.Ping(done, b.EID(), &urma.PingOptions{UASID: b.UASID()})
			require.ErrorIs(t, err, context.Canceled)

			uasid := b.UASID()
			require.NoError(t, b.Close())
			_, err = a.Ping(ctx, a.EID(), &urma.PingOptions{UASID: uasid})
			require.ErrorIs(t, err, urma.ErrNotFound, "a closed context")
		})
	}
}
