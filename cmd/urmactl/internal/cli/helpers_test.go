package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// openLoopback opens a loopback context whose socket lives in a fresh
// runtime directory of the test, which it returns. The directory is set
// before the open because the provider reads it then, and it is private so
// that contexts left by other runs (in /dev/shm or $XDG_RUNTIME_DIR) never
// show up in a listing.
func openLoopback(t *testing.T) (*urma.Context, string) {
	t.Helper()
	// A subdirectory, which the provider creates 0700: t.TempDir is 0755
	// and the provider refuses a directory other users can enter.
	dir := filepath.Join(socketDir(t), "rt")
	t.Setenv(loopback.EnvRuntimeDir, dir)
	dev, err := urma.DeviceByName(loopback.DeviceName)
	require.NoError(t, err)
	ctx, err := urma.Open(dev, 0, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ctx.Close() })
	return ctx, dir
}

// privateDir returns an empty directory of the test that passes the
// checks urma.Open applies to a runtime directory: t.TempDir itself is
// 0755, which the listings refuse as the provider does.
func privateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(socketDir(t), "private")
	require.NoError(t, os.Mkdir(dir, 0o700))
	return dir
}

// socketDir returns an empty directory of the test in which unix sockets
// can be bound: one under /dev/shm (a tmpfs) where there is one, as in the
// VM guest, whose $TMPDIR is the host's over 9p, which refuses them; else
// t.TempDir.
func socketDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "urmactl-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// fixture is a context holding one object of each kind segment ls and
// jetty ls list.
type fixture struct {
	ctx    *urma.Context
	dir    string
	shared *segment.Segment // allocated: "shared" memory, PLAIN_TEXT token
	caller *segment.Segment // registered: "caller" memory
	jfs    *jetty.JFS
	jfr    *jetty.JFR // two receives posted
	jetty  *jetty.Jetty
	jfc    *jetty.JFC // every queue's
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx, dir := openLoopback(t)
	f := &fixture{ctx: ctx, dir: dir}
	var err error
	f.shared, err = segment.Alloc(ctx, 8192, segment.Config{Access: segment.Read | segment.Write,
		TokenPolicy: segment.TokenPlainText, Token: 0x5eed})
	require.NoError(t, err)
	f.caller, err = segment.Register(ctx, make([]byte, 4096), segment.Config{Access: segment.Read})
	require.NoError(t, err)
	jfc, err := jetty.NewJFC(ctx, jetty.JFCConfig{Depth: 64})
	require.NoError(t, err)
	f.jfc = jfc
	f.jfs, err = jetty.NewJFS(ctx, jetty.JFSConfig{Depth: 16, JFC: jfc})
	require.NoError(t, err)
	f.jfr, err = jetty.NewJFR(ctx, jetty.JFRConfig{Depth: 8, JFC: jfc})
	require.NoError(t, err)
	require.NoError(t, f.jfr.Recv(f.shared.SGE(0, 64), 1))
	require.NoError(t, f.jfr.Recv(f.shared.SGE(64, 64), 2))
	f.jetty, err = jetty.NewJetty(ctx, jetty.JettyConfig{Send: jetty.JFSConfig{Depth: 4, Mode: urma.RC, JFC: jfc},
		Recv: jetty.JFRConfig{Depth: 4}})
	require.NoError(t, err)
	return f
}
