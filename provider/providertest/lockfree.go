package providertest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// lockFreeTests check a JFC created with LockFree, which one goroutine at a
// time polls: each record is taken once and in its queue's order, and the
// queues get their room back, exactly, whoever completes into it; and a
// JFS created with LockFree, which one goroutine at a time posts to and
// polls the JFC of, while other goroutines use the queue as they may.
var lockFreeTests = []test{
	{"room comes back", testLockFreeRoom},
	{"many producers, one poller", testLockFreeProducers},
	{"lock-free JFS among other callers", testLockFreeJFS},
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

// testLockFreeJFS streams 8-byte SENDs from a lock-free JFS, posted and
// its JFC polled by this goroutine alone, while two others take the
// queue's lock the provider's way: one calls Query in a loop, one
// registers and closes segments (on loopback a segment's close waits for
// every send queue of the process). Every message arrives once, in order,
// with its bytes, and every send record comes back, in order.
func testLockFreeJFS(t *testing.T, e *env) {
	// Few enough for Soft-RoCE under emulation and the race detector,
	// where a message takes far longer than on hardware.
	const n, depth, recvs = 400, 32, 128
	jfc := e.lockFreeJFC(e.a, depth)
	// The receiver reposts as it goes; starved by the race detector and
	// the other callers it can fall behind, and a SEND then waits for a
	// receive for as long as it takes (RNRRetry 7), which is not what this
	// case is about.
	s := e.sender(jetty.JFSConfig{Depth: depth, JFC: jfc, LockFree: true, RNRRetry: 7})
	r := e.receiver(jetty.JFRConfig{Depth: recvs})
	src := e.seg(e.a, 8*n, segment.LocalOnly)
	dst := e.seg(e.b, 8*recvs, segment.LocalOnly)
	for i := range recvs {
		require.NoError(t, r.jfr.Recv(dst.SGE(uint64(8*i), 8), uint64(i)))
	}
	stop := make(chan struct{})
	errs := make(chan error, 3)
	var wg sync.WaitGroup
	wg.Go(func() { // another caller's Query
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.jfs.Query(); err != nil {
				errs <- fmt.Errorf("query: %w", err)
				return
			}
			runtime.Gosched()
		}
	})
	wg.Go(func() { // segments come and go
		for {
			select {
			case <-stop:
				return
			default:
			}
			seg, err := segment.Alloc(e.a, 4096, segment.Config{Access: segment.LocalOnly})
			if err != nil {
				errs <- fmt.Errorf("segment: %w", err)
				return
			}
			if err := seg.Close(); err != nil {
				errs <- fmt.Errorf("segment close: %w", err)
				return
			}
			time.Sleep(100 * time.Microsecond)
		}
	})
	received := make(chan struct{})
	wg.Go(func() { // the receiver: checks each message, posts its receive again
		buf := make([]jetty.CR, 16)
		deadline := time.Now().Add(e.timeout)
		for got := 0; got < n; {
			k, err := r.jfc.Poll(buf)
			if err != nil {
				errs <- err
				return
			}
			for _, cr := range buf[:k] {
				slot := cr.UserCtx % recvs
				v := binary.LittleEndian.Uint64(dst.Bytes()[8*slot:])
				if cr.Status != urma.CRSuccess || cr.Len != 8 || v != uint64(got) || slot != uint64(got)%recvs {
					errs <- fmt.Errorf("message %d: record %v, bytes hold %d", got, cr, v)
					return
				}
				got++
				if err := r.jfr.Recv(dst.SGE(8*slot, 8), cr.UserCtx+recvs); err != nil {
					errs <- err
					return
				}
			}
			if k == 0 && time.Now().After(deadline) {
				errs <- fmt.Errorf("receiver timed out with %d of %d messages", got, n)
				return
			}
		}
		close(received)
	})
	defer func() {
		close(stop)
		wg.Wait()
	}()
	crs := make([]jetty.CR, 16)
	done := 0
	take := func() {
		k, err := jfc.Poll(crs)
		require.NoError(t, err)
		for _, cr := range crs[:k] {
			require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
			require.Equal(t, uint64(done), cr.UserCtx, "send records in order")
			done++
		}
	}
	deadline := time.Now().Add(e.timeout)
	for i := 0; i < n; {
		binary.LittleEndian.PutUint64(src.Bytes()[8*i:], uint64(i))
		wr := []jetty.WR{{Opcode: urma.OpSend, Flags: jetty.Signaled, To: r.remote, UserCtx: uint64(i),
			Local: []segment.SGE{src.SGE(uint64(8*i), 8)}}}
		switch err := s.jfs.Post(wr); {
		case err == nil:
			i++
		case errors.Is(err, urma.ErrAgain):
			take()
		default:
			t.Fatalf("post %d: %v", i, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out posting %d of %d", i, n)
		}
	}
	for done < n {
		take()
		select {
		case err := <-errs:
			require.NoError(t, err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out with %d of %d send records", done, n)
		}
	}
	select {
	case <-received:
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(time.Until(deadline)):
		t.Fatal("timed out waiting for the receiver")
	}
}
