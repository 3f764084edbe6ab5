package loopback_test

import (
	"context"
	"net"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
)

// openAt opens a loopback context on EID index i, in the runtime
// directory the test set.
func openAt(t *testing.T, i int) *urma.Context {
	t.Helper()
	dev, err := urma.DeviceByName(loopback.DeviceName)
	require.NoError(t, err)
	c, err := urma.Open(dev, i, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// A context answers pings by UASID and, at an EID, any context other than
// the pinging one does; nobody at an EID is ErrNotFound at once.
func TestPing(t *testing.T) {
	t.Setenv(loopback.EnvRuntimeDir, filepath.Join(t.TempDir(), "rt"))
	a, b := openAt(t, 0), openAt(t, 1)
	ctx := context.Background()

	rtt, err := a.Ping(ctx, b.EID(), &urma.PingOptions{UASID: b.UASID(), Size: a.MaxPingSize()})
	require.NoError(t, err)
	require.Positive(t, rtt)
	_, err = a.Ping(ctx, b.EID(), nil)
	require.NoError(t, err, "by EID alone")
	_, err = b.Ping(ctx, a.EID(), &urma.PingOptions{Size: 1})
	require.NoError(t, err, "the other way")

	// a is the only context at its EID: it does not answer for it to
	// itself, but does by its UASID.
	_, err = a.Ping(ctx, a.EID(), nil)
	require.ErrorIs(t, err, urma.ErrNotFound)
	_, err = a.Ping(ctx, a.EID(), &urma.PingOptions{UASID: a.UASID()})
	require.NoError(t, err)

	start := time.Now()
	_, err = a.Ping(ctx, urma.EIDFromAddr(netipAddr(t, "127.0.0.9")), nil)
	require.ErrorIs(t, err, urma.ErrNotFound)
	_, err = a.Ping(ctx, b.EID(), &urma.PingOptions{UASID: b.UASID() + 1})
	require.ErrorIs(t, err, urma.ErrNotFound)
	require.Less(t, time.Since(start), time.Second, "a missing peer is known at once")

	_, err = a.Ping(ctx, b.EID(), &urma.PingOptions{Size: a.MaxPingSize() + 1})
	require.ErrorIs(t, err, urma.ErrInvalid)
	_, err = a.Ping(ctx, b.EID(), &urma.PingOptions{Size: -1})
	require.ErrorIs(t, err, urma.ErrInvalid)

	require.NoError(t, b.Close())
	_, err = a.Ping(ctx, b.EID(), nil)
	require.ErrorIs(t, err, urma.ErrNotFound, "a closed context answers no more")
	_, err = b.Ping(ctx, a.EID(), nil)
	require.ErrorIs(t, err, urma.ErrClosed)
}

// A peer that never answers makes Ping end at ctx's deadline, with an
// error that matches context.DeadlineExceeded and ErrTimeout.
func TestPingTimeout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rt")
	t.Setenv(loopback.EnvRuntimeDir, dir)
	a := openAt(t, 0)
	// A listener at a context's socket name that reads and never answers.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "127.0.0.3-0000abcd.sock"), Net: "unix"})
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
			go func() { _, _ = conn.Read(make([]byte, 64)) }()
		}
	}()
	dst := urma.EIDFromAddr(netipAddr(t, "127.0.0.3"))
	for _, uasid := range []uint32{0, 0xabcd} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		start := time.Now()
		_, err = a.Ping(ctx, dst, &urma.PingOptions{UASID: uasid})
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorIs(t, err, urma.ErrTimeout)
		require.Less(t, time.Since(start), time.Second)
	}
}

// ListenPing has nothing to do on loopback: a context answers without it.
func TestListenPing(t *testing.T) {
	t.Setenv(loopback.EnvRuntimeDir, filepath.Join(t.TempDir(), "rt"))
	a, b := openAt(t, 0), openAt(t, 1)
	l, err := b.ListenPing()
	require.NoError(t, err)
	_, err = a.Ping(context.Background(), b.EID(), nil)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	_, err = a.Ping(context.Background(), b.EID(), nil)
	require.NoError(t, err)
	var nilCtx *urma.Context
	_, err = nilCtx.Ping(context.Background(), b.EID(), nil)
	require.ErrorIs(t, err, urma.ErrInvalid)
	require.NoError(t, b.Close())
	_, err = b.ListenPing()
	require.ErrorIs(t, err, urma.ErrClosed)
}

func netipAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	require.NoError(t, err)
	return a
}
