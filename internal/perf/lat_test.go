package perf

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/urma"
)

// connectedPair opens a server and a client endpoint of cfg on loopback0
// (EIDs 0 and 1) and connects each to the other, as Server and Client do
// over their out-of-band channel.
func connectedPair(t *testing.T, cfg Config) (srv, cli *endpoint) {
	t.Helper()
	cfg = cfg.Defaults()
	require.NoError(t, cfg.Validate())
	var err error
	srv, err = openEndpoint("loopback0", 0, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.close()) })
	cli, err = openEndpoint("loopback0", 1, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cli.close()) })
	si, err := srv.info()
	require.NoError(t, err)
	ci, err := cli.info()
	require.NoError(t, err)
	require.NoError(t, srv.connect(ci))
	require.NoError(t, cli.connect(si))
	return srv, cli
}

// TestServerRetiresTheLastSizesAnswer: a server's loop stops when the
// client says done, and its last answer may still be running then (its
// record can come after the client has the answer, as on siw). The
// next size's loop must retire it before posting, on a queue of depth 1,
// instead of failing with a full queue.
func TestServerRetiresTheLastSizesAnswer(t *testing.T) {
	for _, name := range []string{"write_lat", "send_lat"} {
		t.Run(name, func(t *testing.T) {
			test, err := ParseTest(name)
			require.NoError(t, err)
			const size = 64
			srv, cli := connectedPair(t, Config{Test: test, Mode: urma.RC, Sizes: []int{size}})
			require.Equal(t, 1, srv.cfg.TxDepth)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var progress atomic.Int64
			c, err := newRun(ctx, cli, size, &progress)
			require.NoError(t, err)
			if test.Op == Send {
				require.NoError(t, c.fillRecvs())
			}

			// The last size's answer: posted, its record not taken.
			last, err := newRun(ctx, srv, size, &progress)
			require.NoError(t, err)
			require.NoError(t, last.postOne())
			require.Equal(t, 1, srv.pendingSend)
			if test.Op == Send {
				require.NoError(t, c.awaitRecv()) // the client had it
			}

			sctx, stop := context.WithCancel(ctx)
			r, err := newRun(sctx, srv, size, &progress)
			require.NoError(t, err)
			if test.Op == Send {
				require.NoError(t, r.fillRecvs())
			}
			served := make(chan error, 1)
			go func() {
				_, err := r.latServer()
				served <- err
			}()

			// One round trip of the new size.
			cli.sendBuf(size)[size-1] = marker(0)
			require.NoError(t, c.postOne())
			require.NoError(t, c.retire())
			if test.Op == Send {
				err = c.awaitRecv()
			} else {
				err = awaitLast(ctx, cli.recvBuf(size), marker(0), &cli.pace)
			}
			if err != nil {
				select {
				case serr := <-served:
					t.Fatalf("no answer: the server's loop ended: %v", serr)
				default:
					t.Fatalf("no answer: %v", err)
				}
			}
			stop()
			require.ErrorIs(t, <-served, errStopped)
		})
	}
}

// TestServerGivesUpOnALeftoverThatNeverCompletes: a request the last size
// left running whose record never comes ends the server's loop with an
// error that says so, rather than hanging it and the client waiting for
// its answer.
func TestServerGivesUpOnALeftoverThatNeverCompletes(t *testing.T) {
	test, err := ParseTest("write_lat")
	require.NoError(t, err)
	srv, _ := connectedPair(t, Config{Test: test, Mode: urma.RC, Sizes: []int{64}})
	old := leftoverWait
	leftoverWait = 50 * time.Millisecond
	t.Cleanup(func() { leftoverWait = old })
	srv.pendingSend = 1 // counted as running, with nothing posted
	var progress atomic.Int64
	r, err := newRun(context.Background(), srv, 64, &progress)
	require.NoError(t, err)
	_, err = r.latServer()
	require.ErrorContains(t, err, "did not complete within 50ms")
}
