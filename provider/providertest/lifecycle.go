package providertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

var lifecycleTests = []test{
	{"use after close", testUseAfterClose},
	{"context close closes children", testContextClose},
	{"JFC in use", testJFCInUse},
	{"query", testQuery},
	{"object closes racing the context's close", testCloseRacingContextClose},
}

func testUseAfterClose(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	r := e.receiver(jetty.JFRConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	rb := e.seg(e.b, 64, segment.LocalOnly)

	require.NoError(t, l.Unregister())
	require.NoError(t, l.Unregister(), "double close")
	require.ErrorIs(t, s.jfs.Send(r.remote, l.SGE(0, 8), 0, 1), urma.ErrClosed, "closed local segment")

	require.NoError(t, r.remote.Unimport())
	l2 := e.seg(e.a, 64, segment.LocalOnly)
	require.ErrorIs(t, s.jfs.Send(r.remote, l2.SGE(0, 8), 0, 1), urma.ErrClosed, "unimported remote")

	require.NoError(t, s.jfs.Close())
	require.NoError(t, s.jfs.Close())
	require.ErrorIs(t, s.jfs.NOP(0, 1), urma.ErrClosed)
	_, err := s.jfs.Query()
	require.ErrorIs(t, err, urma.ErrClosed)

	require.NoError(t, r.jfr.Close())
	require.NoError(t, r.jfr.Close(), "double close")
	require.ErrorIs(t, r.jfr.Recv(rb.SGE(0, 8), 1), urma.ErrClosed)
	_, err = r.jfr.Query()
	require.ErrorIs(t, err, urma.ErrClosed)
	require.NoError(t, r.jfc.Close())
	require.NoError(t, r.jfc.Close(), "double close")
	_, err = r.jfc.Poll(make([]jetty.CR, 1))
	require.ErrorIs(t, err, urma.ErrClosed)
	require.ErrorIs(t, r.jfc.Rearm(false), urma.ErrClosed)

	jfc := e.jfc(e.a, 0)
	j, err := jetty.NewJetty(e.a, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc}})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	require.NoError(t, j.Close(), "double close")
	require.ErrorIs(t, j.NOP(0, 1), urma.ErrClosed)
	require.ErrorIs(t, j.Recv(l2.SGE(0, 8), 1), urma.ErrClosed)

	tg := e.remoteSegTarget(64)
	require.NoError(t, tg.Unimport())
	require.NoError(t, tg.Unimport(), "double unimport")
}

func testContextClose(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	l := e.seg(e.a, 64, segment.LocalOnly)
	ce := e.jfce(e.a)
	jfc := e.eventJFC(e.a, ce)
	r := e.receiver(jetty.JFRConfig{})
	require.NoError(t, e.a.Close())
	require.NoError(t, e.a.Close(), "double close")
	require.ErrorIs(t, s.jfs.NOP(0, 1), urma.ErrClosed)
	_, err := s.jfs.Query()
	require.ErrorIs(t, err, urma.ErrClosed)
	require.NoError(t, l.Unregister(), "unregistering after the context closed is harmless")
	_, err = jfc.Poll(make([]jetty.CR, 1))
	require.ErrorIs(t, err, urma.ErrClosed)
	_, err = segment.Alloc(e.a, 64, segment.Config{Access: segment.LocalOnly})
	require.ErrorIs(t, err, urma.ErrClosed)
	_, err = jetty.NewJFC(e.a, jetty.JFCConfig{})
	require.ErrorIs(t, err, urma.ErrClosed)
	_, err = jetty.ImportJFR(t.Context(), e.a, r.jfr.Descriptor(), 0)
	require.ErrorIs(t, err, urma.ErrClosed)
	// The target context is still open and its queues still work.
	rb := e.seg(e.b, 64, segment.LocalOnly)
	require.NoError(t, r.jfr.Recv(rb.SGE(0, 8), 1))
	require.NoError(t, s.jfs.Close(), "closing a child after its context is harmless")
	var nilCtx *urma.Context
	require.NoError(t, nilCtx.Close(), "nil-safe")
}

func testJFCInUse(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{})
	require.ErrorIs(t, s.jfc.Close(), urma.ErrBusy)
	require.NoError(t, s.jfs.Close())
	require.NoError(t, s.jfc.Close())
}

func testQuery(t *testing.T, e *env) {
	s := e.sender(jetty.JFSConfig{Depth: 16})
	a, err := s.jfs.Query()
	require.NoError(t, err)
	require.Equal(t, urma.StateReady, a.State)
	require.Equal(t, urma.RM, a.Mode)
	require.Equal(t, 16, a.Depth)
	require.Equal(t, e.a.EID(), a.ID.EID)
	require.Equal(t, e.a.UASID(), a.ID.UASID)
	r := e.receiver(jetty.JFRConfig{})
	ra, err := r.jfr.Query()
	require.NoError(t, err)
	require.Equal(t, r.jfr.Descriptor().ID, ra.ID)
	require.Equal(t, urma.JFRStateReady, ra.State)
}

// testCloseRacingContextClose closes a context while other goroutines close
// its objects (a server's connections closing as the program exits): each
// Close returns nil or ErrClosed, none hangs, and the process survives the
// queues flushing their receives into JFCs the context tears down.
func testCloseRacingContextClose(t *testing.T, e *env) {
	for range 3 {
		a, b := e.pair(t)
		require.NotNil(t, a)
		require.NotNil(t, b)
		jfc, err := jetty.NewJFC(a, jetty.JFCConfig{Depth: 256})
		require.NoError(t, err)
		mem, err := segment.Alloc(a, 1<<12, segment.Config{Access: segment.LocalOnly})
		require.NoError(t, err)
		peerSeg, err := segment.Alloc(b, 64, segment.Config{Access: segment.Read})
		require.NoError(t, err)
		var objs []interface{ Close() error }
		for range 2 {
			j, err := jetty.NewJetty(a, jetty.JettyConfig{
				Send: jetty.JFSConfig{Depth: 16, JFC: jfc},
				Recv: jetty.JFRConfig{Depth: 16, JFC: jfc},
			})
			require.NoError(t, err)
			jfr, err := jetty.NewJFR(a, jetty.JFRConfig{Depth: 16, JFC: jfc})
			require.NoError(t, err)
			for i := range 16 {
				require.NoError(t, j.Recv(mem.SGE(uint64(i*64), 64), uint64(i)))
				require.NoError(t, jfr.Recv(mem.SGE(uint64(1024+i*64), 64), uint64(i)))
			}
			tg, err := segment.Import(t.Context(), a, peerSeg.Descriptor(), 0)
			require.NoError(t, err)
			objs = append(objs, j, jfr, tg)
		}
		objs = append(objs, mem)
		errs := make(chan error, len(objs))
		for _, o := range objs {
			go func() { errs <- o.Close() }()
		}
		closeWithin(t, e.timeout, "context", a.Close)
		for range objs {
			select {
			case err := <-errs:
				if err != nil {
					require.ErrorIs(t, err, urma.ErrClosed)
				}
			case <-time.After(e.timeout):
				t.Fatal("an object's Close did not return while its context closed")
			}
		}
		closeWithin(t, e.timeout, "peer context", b.Close)
	}
}
