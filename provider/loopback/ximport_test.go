package loopback_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// An import from a process that does not answer ends with its context,
// long before the link's own timeout, and leaves the link usable: the
// owner's late answer is dropped, not taken for the next request's.
func TestXProcImportEndsWithContext(t *testing.T) {
	x := newXProc(t)
	seg, err := segment.Alloc(x.b, 4096, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	tgt, err := segment.Import(t.Context(), x.a, seg.Descriptor(), 0) // the link is up
	require.NoError(t, err)
	jfr, _, rem := x.peerJFR(t, 4)
	local, err := segment.Alloc(x.a, 64, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)

	require.NoError(t, x.peer.Process().Signal(syscall.SIGSTOP))
	waitStopped(t, x.peer.Pid())
	for _, c := range []struct {
		name string
		want error
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"deadline", context.DeadlineExceeded, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}},
		{"cancel", context.Canceled, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}},
	} {
		ctx, cancel := c.ctx()
		start := time.Now()
		_, err := jetty.ImportJFR(ctx, x.a, jfr.Descriptor(), 0)
		took := time.Since(start)
		cancel()
		require.ErrorIs(t, err, c.want, c.name)
		// The bound is generous for a loaded machine; the link's own
		// timeout is seconds.
		require.Less(t, took, 2*time.Second, "%s: the import ended %v after it started", c.name, took)
	}
	require.NoError(t, x.peer.Process().Signal(syscall.SIGCONT))

	again, err := jetty.ImportJFR(t.Context(), x.a, jfr.Descriptor(), 0)
	require.NoError(t, err, "the link answers the next import with its own reply")
	require.NoError(t, again.Close())
	jfs, jfc := sendSide(t, x.a, jetty.JFSConfig{})
	copy(local.Bytes(), "still reachable")
	require.NoError(t, jfs.Write(rem, tgt.SGE(0, 15), local.SGE(0, 15), 0, 1))
	require.Equal(t, urma.CRSuccess, pollN(t, jfc, 1, 5*time.Second)[0].Status)
	require.Equal(t, "still reachable", string(seg.Bytes()[:15]))
}
