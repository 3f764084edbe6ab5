package loopback

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
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

// A relative runtime directory is refused before anything is created:
// each process would resolve it against its own working directory.
func TestRuntimeDirRelativeRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(EnvRuntimeDir, filepath.Join("relative", "rt"))
	err := ensureDir(RuntimeDir())
	require.ErrorIs(t, err, provider.ErrInvalid)
	require.ErrorContains(t, err, `loopback runtime directory "relative/rt" is relative; it must be absolute`)
	_, err = os.Stat("relative")
	require.ErrorIs(t, err, os.ErrNotExist, "nothing was created under the working directory")
}

// The directory is made inside an existing $XDG_RUNTIME_DIR, but a
// missing $XDG_RUNTIME_DIR is an error that names it, and is not created:
// it belongs to the login session.
func TestRuntimeDirXDGNotCreated(t *testing.T) {
	t.Setenv(EnvRuntimeDir, "")
	base := t.TempDir()
	xdg := filepath.Join(base, "run-user")
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	require.Equal(t, filepath.Join(xdg, "urma-loopback"), RuntimeDir())

	err := ensureDir(RuntimeDir())
	require.ErrorIs(t, err, provider.ErrNotFound)
	require.ErrorContains(t, err, "XDG_RUNTIME_DIR="+xdg+" does not exist")
	require.ErrorContains(t, err, EnvRuntimeDir)
	_, err = os.Stat(xdg)
	require.ErrorIs(t, err, os.ErrNotExist, "XDG_RUNTIME_DIR was not created")

	require.NoError(t, os.Mkdir(xdg, 0o700))
	require.NoError(t, ensureDir(RuntimeDir()))
	fi, err := os.Lstat(RuntimeDir())
	require.NoError(t, err)
	require.True(t, fi.IsDir())
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}
