package loopback_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// A request reaches a peer's memory through mappings that the link's
// teardown unmaps when the peer process dies. Requests count no entries
// into the peer; instead the teardown waits for every post of the context
// in progress, which holds its queue's lock: with that lock held, the
// memory stays mapped, and it goes once the lock is let go.
func TestPeerTeardownWaitsForPosts(t *testing.T) {
	x := newXProc(t)
	seg, err := segment.Alloc(x.b, 1<<12, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	tgt, err := segment.Import(t.Context(), x.a, seg.Descriptor(), 0)
	require.NoError(t, err)
	_, _, rem := x.peerJFR(t, 4)
	jfs, jfc := sendSide(t, x.a, jetty.JFSConfig{})
	local, err := segment.Alloc(x.a, 1<<12, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	require.NoError(t, jfs.Write(rem, tgt.SGE(0, 8), local.SGE(0, 8), 0, 1))
	require.True(t, pollN(t, jfc, 1, 5*time.Second)[0].OK())

	torn := loopback.PeerTeardowns(x.a.Raw())
	require.Len(t, torn, 1, "one link, to the peer process")
	release := loopback.HoldQueue(jfs.Raw())
	require.NoError(t, x.peer.Process().Kill())
	select {
	case <-torn[0]:
		release()
		t.Fatal("the peer's memory was unmapped under a post in progress")
	case <-time.After(300 * time.Millisecond):
	}
	release()
	select {
	case <-torn[0]:
	case <-time.After(10 * time.Second):
		t.Fatal("the teardown did not finish after the post ended")
	}
}

// Unregister waits the same way for the posts of this process that may be
// copying from or into the segment: with a post's queue lock held, Close
// does not return.
func TestSegmentCloseWaitsForPosts(t *testing.T) {
	ctx := openLocal(t)
	src, err := segment.Alloc(ctx, 1<<12, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	jfs, _ := sendSide(t, ctx, jetty.JFSConfig{})

	release := loopback.HoldQueue(jfs.Raw())
	closed := make(chan error, 1)
	go func() { closed <- src.Close() }()
	select {
	case err := <-closed:
		release()
		t.Fatalf("segment closed under a post in progress (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the segment did not close after the post ended")
	}
}

// A post of receives that got in just before a Close marked the JFR's state
// word reports the Close (ErrClosed), as one that came after it does, not
// the state the word was left in.
func TestRecvRacingCloseReportsClosed(t *testing.T) {
	ctx := openLocal(t)
	jfc, err := jetty.NewJFC(ctx, jetty.JFCConfig{Depth: 16})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(ctx, jetty.JFRConfig{Depth: 4, JFC: jfc})
	require.NoError(t, err)
	buf, err := segment.Alloc(ctx, 64, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)

	restore := loopback.MarkJFRClosing(jfr.Raw())
	require.ErrorIs(t, jfr.Recv(buf.SGE(0, 64), 1), urma.ErrClosed)
	restore()
	require.NoError(t, jfr.Recv(buf.SGE(0, 64), 2))
}

// Close of a JFR unmaps its ring only once the posts of receives and the
// deliveries of this process under way are out of it, whichever of the two
// counts holds it, and nothing enters once Close has begun.
func TestJFRCloseWaitsForPostsAndSenders(t *testing.T) {
	for _, posting := range []bool{true, false} {
		ctx := openLocal(t)
		jfc, err := jetty.NewJFC(ctx, jetty.JFCConfig{Depth: 16})
		require.NoError(t, err)
		jfr, err := jetty.NewJFR(ctx, jetty.JFRConfig{Depth: 4, JFC: jfc})
		require.NoError(t, err)
		leave, ok := loopback.EnterJFR(jfr.Raw(), posting)
		require.True(t, ok)
		closed := make(chan error, 1)
		go func() { closed <- jfr.Close() }()
		select {
		case err := <-closed:
			t.Fatalf("posting=%v: Close returned (%v) with a caller inside", posting, err)
		case <-time.After(50 * time.Millisecond):
		}
		_, ok = loopback.EnterJFR(jfr.Raw(), !posting)
		require.False(t, ok, "posting=%v: a caller got in after Close began", posting)
		leave()
		select {
		case err := <-closed:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("posting=%v: Close still waits after the caller left", posting)
		}
	}
}

// An object's Close and its context's Close may run at once in two
// goroutines (a server's connection closing while the program exits): the
// object is torn down once, and a queue that flushes its receives into its
// JFC does so before the context's Close unmaps that JFC.
func TestObjectCloseRacingContextClose(t *testing.T) {
	dev, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	for range 30 {
		uctx, err := urma.Open(dev, 0, nil)
		require.NoError(t, err)
		jfc, err := jetty.NewJFC(uctx, jetty.JFCConfig{Depth: 8 * 64})
		require.NoError(t, err)
		mem, err := segment.Alloc(uctx, 1<<16, segment.Config{Access: segment.LocalOnly})
		require.NoError(t, err)
		var objs []interface{ Close() error }
		for range 4 {
			j, err := jetty.NewJetty(uctx, jetty.JettyConfig{
				Send: jetty.JFSConfig{Depth: 32, JFC: jfc},
				Recv: jetty.JFRConfig{Depth: 32, JFC: jfc},
			})
			require.NoError(t, err)
			for i := range 32 {
				require.NoError(t, j.Recv(mem.SGE(uint64(i*64), 64), uint64(i)))
			}
			jfr, err := jetty.NewJFR(uctx, jetty.JFRConfig{Depth: 32, JFC: jfc})
			require.NoError(t, err)
			for i := range 32 {
				require.NoError(t, jfr.Recv(mem.SGE(uint64(i*64), 64), uint64(i)))
			}
			objs = append(objs, j, jfr)
		}
		done := make(chan struct{})
		for _, o := range objs {
			go func() {
				defer func() { done <- struct{}{} }()
				_ = o.Close() // nil, or closed by the context first
			}()
		}
		require.NoError(t, uctx.Close())
		for range objs {
			<-done
		}
	}
}
