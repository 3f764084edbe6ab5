package providertest

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// lockFreeTests check a JFC created with LockFree, which one goroutine at a
// time polls: each record is taken once and in its queue's order, and the
// queues get their room back, exactly, whoever completes into it.
var lockFreeTests = []test{
	{"room comes back", testLockFreeRoom},
	{"many producers, one poller", testLockFreeProducers},
}

func (e *env) lockFreeJFC(ctx *urma.Context, depth int) *jetty.JFC {
	j, err := jetty.NewJFC(ctx, jetty.JFCConfig{Depth: depth, LockFree: true})
	require.NoError(e.t, err)
	return j
}

// testLockFreeRoom fills a queue of depth 4 on a lock-free JFC round after
// round: each round, after the last one's records were polled, exactly
// four requests are taken again, and the four records come once each.
func testLockFreeRoom(t *testing.T, e *env) {
	jfc := e.lockFreeJFC(e.a, 64)
	s := e.sender(jetty.JFSConfig{Depth: 4, JFC: jfc})
	wrs := make([]jetty.WR, 5)
	for round := range 100 {
		for i := range wrs {
			wrs[i] = jetty.WR{Opcode: urma.OpNOP, Flags: jetty.Signaled, UserCtx: uint64(round*4 + i)}
		}
		err := s.jfs.Post(wrs)
		var pe *jetty.PostError
		require.ErrorAs(t, err, &pe, "round %d: the fifth request finds the queue full", round)
		require.Equal(t, 4, pe.Index, "round %d: the polled records gave back exactly four slots", round)
		require.ErrorIs(t, err, urma.ErrAgain)
		for i, cr := range e.poll(jfc, 4) {
			require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
			require.Equal(t, uint64(round*4+i), cr.UserCtx, "round %d: each record once, in order", round)
		}
	}
	e.none(jfc)
}

// testLockFreeProducers has three goroutines post into three queues of one
// lock-free JFC while this one polls it: every record comes once, each
// queue's in order, and each queue gets back the room its polled records
// free (a queue that did not would stop taking requests).
func testLockFreeProducers(t *testing.T, e *env) {
	const queues, perQueue, depth = 3, 500, 8
	jfc := e.lockFreeJFC(e.a, queues*depth)
	stop := make(chan struct{})
	defer close(stop)
	errs := make(chan error, queues)
	var wg sync.WaitGroup
	for k := range queues {
		s := e.sender(jetty.JFSConfig{Depth: depth, JFC: jfc})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perQueue; {
				wr := []jetty.WR{{Opcode: urma.OpNOP, Flags: jetty.Signaled, UserCtx: uint64(k)<<32 | uint64(i)}}
				switch err := s.jfs.Post(wr); {
				case err == nil:
					i++
				case errors.Is(err, urma.ErrAgain):
					// Full until the poller credits the queue.
					select {
					case <-stop:
						return
					default:
						runtime.Gosched()
					}
				default:
					errs <- fmt.Errorf("queue %d, request %d: %w", k, i, err)
					return
				}
			}
		}()
	}
	var next [queues]uint64
	buf := make([]jetty.CR, 16)
	deadline := time.Now().Add(e.timeout)
	for got := 0; got < queues*perQueue; {
		n, err := jfc.Poll(buf)
		require.NoError(t, err)
		for _, cr := range buf[:n] {
			require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
			k, i := cr.UserCtx>>32, cr.UserCtx&(1<<32-1)
			require.Less(t, k, uint64(queues), "%v", cr)
			require.Equal(t, next[k], i, "queue %d: each record once, in order", k)
			next[k]++
		}
		got += n
		if n == 0 {
			select {
			case err := <-errs:
				t.Fatal(err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out with %d of %d records; per queue %v", got, queues*perQueue, next)
			}
			runtime.Gosched()
		}
	}
	wg.Wait()
	e.none(jfc)
}
