package urmanet_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/net/nettest"

	"github.com/stretchr/testify/require"

	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/urmanet"
)

// openCtx opens a loopback context on EID index i, closed with the test.
func openCtx(t testing.TB, i int) *urma.Context {
	t.Helper()
	dev, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	c, err := urma.Open(dev, i, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// pipe dials a listener of server from client and returns both ends.
func pipe(t testing.TB, server, client *urma.Context) (net.Listener, net.Conn, net.Conn) {
	t.Helper()
	l, err := urmanet.Listen(server, ":0")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type res struct {
		c   net.Conn
		err error
	}
	acc := make(chan res, 1)
	go func() { c, err := l.Accept(); acc <- res{c, err} }()
	d, err := urmanet.Dial(ctx, client, l.Addr().String())
	require.NoError(t, err)
	r := <-acc
	require.NoError(t, r.err)
	return l, d, r.c
}

func TestAddrRoundTrip(t *testing.T) {
	for _, s := range []string{"[fe80::1]:80", "10.0.0.1:65535"} {
		a, err := urmanet.ParseAddr(s)
		require.NoError(t, err)
		require.Equal(t, s, a.String())
		require.Equal(t, "urma", a.Network())
	}
	for _, s := range []string{"fe80::1:80", "[fe80::1]:0", "[fe80::1]:70000", "host:1"} {
		_, err := urmanet.ParseAddr(s)
		require.ErrorIs(t, err, urma.ErrInvalid, s)
	}
}

func TestDialNoListener(t *testing.T) {
	server, client := openCtx(t, 0), openCtx(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addr := urmanet.Addr{EID: server.EID(), Port: 4242}
	_, err := urmanet.Dial(ctx, client, addr.String())
	require.ErrorIs(t, err, urma.ErrNotFound)
}

func TestListenPortTaken(t *testing.T) {
	server := openCtx(t, 0)
	l, err := urmanet.Listen(server, ":4243")
	require.NoError(t, err)
	defer l.Close()
	_, err = urmanet.Listen(server, ":4243")
	require.ErrorIs(t, err, urma.ErrExist)
	require.NoError(t, l.Close())
	l2, err := urmanet.Listen(server, ":4243")
	require.NoError(t, err)
	require.NoError(t, l2.Close())
}

func TestStream(t *testing.T) {
	server, client := openCtx(t, 0), openCtx(t, 1)
	l, c1, c2 := pipe(t, server, client)
	defer l.Close()
	defer c1.Close()
	defer c2.Close()
	// More than the window of messages, so that credits must come back.
	want := make([]byte, 3*urmanet.Window*urmanet.SlotSize+123)
	for i := range want {
		want[i] = byte(i * 7)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c1.Write(want)
		if err == nil {
			err = c1.(*urmanet.Conn).CloseWrite()
		}
		errc <- err
	}()
	got, err := io.ReadAll(c2)
	require.NoError(t, err)
	require.NoError(t, <-errc)
	require.True(t, bytes.Equal(want, got), "stream differs")
	// The write side is shut, the read side is not.
	_, err = c2.Write([]byte("back"))
	require.NoError(t, err)
	b := make([]byte, 4)
	_, err = io.ReadFull(c1, b)
	require.NoError(t, err)
	require.Equal(t, "back", string(b))
	_, err = c1.Write(b)
	require.Error(t, err)
}

func TestCloseUnblocksRead(t *testing.T) {
	server, client := openCtx(t, 0), openCtx(t, 1)
	l, c1, c2 := pipe(t, server, client)
	defer l.Close()
	defer c2.Close()
	errc := make(chan error, 1)
	go func() { _, err := c1.Read(make([]byte, 8)); errc <- err }()
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, c1.Close())
	require.ErrorIs(t, <-errc, net.ErrClosed)
	// The peer reads the end of the stream.
	_, err := c2.Read(make([]byte, 8))
	require.ErrorIs(t, err, io.EOF)
}

func TestListenerClose(t *testing.T) {
	server := openCtx(t, 0)
	l, err := urmanet.Listen(server, ":0")
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() { _, err := l.Accept(); errc <- err }()
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, l.Close())
	require.True(t, errors.Is(<-errc, net.ErrClosed))
	require.NoError(t, l.Close())
}

func TestNettestConn(t *testing.T) {
	server, client := openCtx(t, 0), openCtx(t, 1)
	nettest.TestConn(t, func() (net.Conn, net.Conn, func(), error) {
		l, c1, c2 := pipe(t, server, client)
		return c1, c2, func() { c1.Close(); c2.Close(); l.Close() }, nil
	})
}

func TestBacklogFullRefuses(t *testing.T) {
	server, client := openCtx(t, 0), openCtx(t, 1)
	l, err := urmanet.Listen(server, ":0")
	require.NoError(t, err)
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range urmanet.Backlog {
		c, err := urmanet.Dial(ctx, client, l.Addr().String())
		require.NoError(t, err)
		conns = append(conns, c)
	}
	_, err = urmanet.Dial(ctx, client, l.Addr().String())
	require.ErrorIs(t, err, urmanet.ErrRefused)
	// Accepting makes room again.
	a, err := l.Accept()
	require.NoError(t, err)
	defer a.Close()
	c, err := urmanet.Dial(ctx, client, l.Addr().String())
	require.NoError(t, err)
	conns = append(conns, c)
}

func TestWriteAfterPeerClose(t *testing.T) {
	server, client := openCtx(t, 0), openCtx(t, 1)
	l, c1, c2 := pipe(t, server, client)
	defer l.Close()
	defer c1.Close()
	require.NoError(t, c2.Close())
	_, err := c1.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF)
	// The peer's Jetty is gone: a write fails, within the deadline.
	require.NoError(t, c1.SetWriteDeadline(time.Now().Add(5*time.Second)))
	buf := make([]byte, 1024)
	var werr error
	for range 4 * urmanet.Window {
		if _, werr = c1.Write(buf); werr != nil {
			break
		}
	}
	require.Error(t, werr)
	require.NotErrorIs(t, werr, os.ErrDeadlineExceeded)
}

// TestDeadlineWakesSleepingRead checks that a Read sleeping on the
// completion events (long past its spin) ends at its deadline, whether
// the deadline was set before it slept or moved into the past meanwhile,
// and that the connection works on after.
func TestDeadlineWakesSleepingRead(t *testing.T) {
	server, client := openCtx(t, 0), openCtx(t, 1)
	l, c1, c2 := pipe(t, server, client)
	defer l.Close()
	defer c1.Close()
	defer c2.Close()
	buf := make([]byte, 8)

	require.NoError(t, c1.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	start := time.Now()
	_, err := c1.Read(buf)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second)

	require.NoError(t, c1.SetReadDeadline(time.Time{}))
	errc := make(chan error, 1)
	go func() { _, err := c1.Read(buf); errc <- err }()
	time.Sleep(50 * time.Millisecond) // the Read is asleep by now
	require.NoError(t, c1.SetReadDeadline(time.Now().Add(-time.Second)))
	select {
	case err := <-errc:
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	case <-time.After(5 * time.Second):
		t.Fatal("a deadline set in the past did not wake the Read")
	}

	require.NoError(t, c1.SetReadDeadline(time.Time{}))
	_, err = c2.Write([]byte("after"))
	require.NoError(t, err)
	n, err := io.ReadFull(c1, buf[:5])
	require.NoError(t, err)
	require.Equal(t, "after", string(buf[:n]))
}
