package loopback

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// bindAs binds a unix socket as a context does (".PID-name.tmp", linked as
// name) and listens on it when listen is set; it returns the descriptor.
func bindAs(t *testing.T, dir, name string, listen bool) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	tmp := filepath.Join(dir, fmt.Sprintf(".%d-%s.tmp", os.Getpid(), name))
	require.NoError(t, unix.Bind(fd, &unix.SockaddrUnix{Name: tmp}))
	if listen {
		require.NoError(t, unix.Listen(fd, 8))
	}
	require.NoError(t, os.Link(tmp, filepath.Join(dir, name)))
	require.NoError(t, os.Remove(tmp))
	return fd
}

// A sweep removes the socket nobody listens on and leaves the listening
// one alone without connecting to it: every context sweeps when it opens
// and closes, and each probe is a connection the live context must serve.
func TestSweepProbesOnlyTheDead(t *testing.T) {
	if _, err := os.Stat("/proc/net/unix"); err != nil {
		t.Skip("no /proc/net/unix here: sweep probes every socket")
	}
	dir := t.TempDir()
	liveFD := bindAs(t, dir, "live-00000001"+sockSuffix, true)
	bindAs(t, dir, "dead-00000002"+sockSuffix, false)

	require.True(t, listening(dir)["live-00000001"+sockSuffix])
	require.False(t, listening(dir)["dead-00000002"+sockSuffix])

	sweep(dir)
	_, err := os.Stat(filepath.Join(dir, "dead-00000002"+sockSuffix))
	require.ErrorIs(t, err, os.ErrNotExist, "the dead socket is gone")
	_, err = os.Stat(filepath.Join(dir, "live-00000001"+sockSuffix))
	require.NoError(t, err, "the live socket stays")
	// A probe's connect completes into the backlog before sweep returns.
	_, _, err = unix.Accept(liveFD)
	require.ErrorIs(t, err, unix.EAGAIN, "the live socket was probed")
}
