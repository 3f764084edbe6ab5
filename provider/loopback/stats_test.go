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

// pollAll polls jfc until n records have come, and returns them.
func pollAll(t *testing.T, jfc *jetty.JFC, n int) []jetty.CR {
	t.Helper()
	out := make([]jetty.CR, n)
	got := 0
	deadline := time.Now().Add(10 * time.Second)
	for got < n {
		k, err := jfc.Poll(out[got:])
		require.NoError(t, err)
		got += k
		if k == 0 {
			require.False(t, time.Now().After(deadline), "%d of %d records", got, n)
			time.Sleep(50 * time.Microsecond)
		}
	}
	return out
}

// tally counts records by error status, as QueueStats.Errors does.
func tally(crs []jetty.CR, into map[urma.CRStatus]uint64) {
	for _, cr := range crs {
		if cr.Status != urma.CRSuccess {
			into[cr.Status]++
		}
	}
}

// TestStatsStatuses makes records of several statuses on both sides and
// checks that each JFC counted every record it returned under its
// status, and that the send queues counted their requests, bytes, RNR
// retries and flushed requests.
func TestStatsStatuses(t *testing.T) {
	p := newPair(t)
	want := map[urma.CRStatus]uint64{}
	wantB := map[urma.CRStatus]uint64{}

	// Two successes, a SEND and a WRITE.
	require.NoError(t, p.jfr.Recv(p.dst.SGE(0, 64), 1))
	require.NoError(t, p.jfs.Send(p.remote, p.src.SGE(0, 40), jetty.Signaled, 1))
	require.NoError(t, p.jfs.Write(p.remote, p.tgt.SGE(128, 100), p.src.SGE(0, 100), jetty.Signaled, 2))
	tally(pollAll(t, p.jfcA, 2), want)
	tally(pollAll(t, p.jfcB, 1), wantB)

	// A receive too short: REM_OPERATION_ERR for the sender, LOC_LEN_ERR
	// for the receiver. The JFS goes to ERROR; reset it.
	require.NoError(t, p.jfr.Recv(p.dst.SGE(0, 8), 2))
	require.NoError(t, p.jfs.Send(p.remote, p.src.SGE(0, 16), jetty.Signaled, 3))
	tally(pollAll(t, p.jfcA, 1), want)
	tally(pollAll(t, p.jfcB, 1), wantB)
	require.NoError(t, p.jfs.Modify(urma.StateReset))
	require.NoError(t, p.jfs.Modify(urma.StateReady))

	// Out of the target's bounds: REM_ACCESS_ABORT_ERR.
	require.NoError(t, p.jfs.Write(p.remote, p.tgt.SGE(1<<16-8, 16), p.src.SGE(0, 16), jetty.Signaled, 4))
	tally(pollAll(t, p.jfcA, 1), want)

	// RNR on another JFS: two retries run by hand, then
	// RNR_RETRY_CNT_EXC_ERR; the SEND behind it is flushed.
	rnr, err := jetty.NewJFS(p.a, jetty.JFSConfig{JFC: p.jfcA, RNRRetry: 2, RNRTimeout: time.Hour})
	require.NoError(t, err)
	require.NoError(t, rnr.Send(p.remote, p.src.SGE(0, 8), jetty.Signaled, 5))
	require.NoError(t, rnr.Send(p.remote, p.src.SGE(0, 4), jetty.Signaled, 6))
	loopback.RNRTick(rnr.Raw())
	loopback.RNRTick(rnr.Raw())
	tally(pollAll(t, p.jfcA, 1), want)
	crs := make([]jetty.CR, 4)
	n, err := rnr.Flush(crs)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, urma.CRWRFlushErr, crs[0].Status)

	require.Equal(t, map[urma.CRStatus]uint64{urma.CRRemOperationErr: 1, urma.CRRemAccessAbortErr: 1,
		urma.CRRNRRetryCntExcErr: 1}, want, "the statuses this test meant to make")
	require.Equal(t, map[urma.CRStatus]uint64{urma.CRLocLenErr: 1}, wantB)

	sa, err := p.jfcA.Stats()
	require.NoError(t, err)
	require.Equal(t, urma.QueueStats{Completions: 5, Errors: want}, sa)
	sb, err := p.jfcB.Stats()
	require.NoError(t, err)
	require.Equal(t, urma.QueueStats{Completions: 2, Errors: wantB}, sb)

	js, err := p.jfs.Stats()
	require.NoError(t, err)
	require.Equal(t, urma.QueueStats{Posted: 4, Bytes: 40 + 100 + 16 + 16}, js)
	rs, err := rnr.Stats()
	require.NoError(t, err)
	require.Equal(t, urma.QueueStats{Posted: 2, Bytes: 12, RNRRetries: 2, Flushed: 1}, rs)
	fs, err := p.jfr.Stats()
	require.NoError(t, err)
	require.Equal(t, urma.QueueStats{RecvPosted: 2}, fs)
}

// TestStatsPostErrors counts refused posts: a full queue's ErrAgain, a
// bad request, and a receive queue's full ring.
func TestStatsPostErrors(t *testing.T) {
	p := newPair(t)
	jfs, err := jetty.NewJFS(p.a, jetty.JFSConfig{JFC: p.jfcA, Depth: 2})
	require.NoError(t, err)
	a, err := jfs.Query()
	require.NoError(t, err)
	for i := 0; i < a.Depth; i++ {
		require.NoError(t, jfs.Write(p.remote, p.tgt.SGE(0, 8), p.src.SGE(0, 8), jetty.Signaled, 1))
	}
	require.ErrorIs(t, jfs.Write(p.remote, p.tgt.SGE(0, 8), p.src.SGE(0, 8), jetty.Signaled, 2), urma.ErrAgain)
	pollAll(t, p.jfcA, a.Depth)
	bad := jetty.WR{Opcode: urma.OpWrite, To: p.remote, Local: []segment.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 16)}
	require.ErrorIs(t, jfs.Post([]jetty.WR{bad}), urma.ErrInvalid, "remote and local lengths differ")
	s, err := jfs.Stats()
	require.NoError(t, err)
	require.Equal(t, urma.QueueStats{Posted: uint64(a.Depth), Bytes: 8 * uint64(a.Depth), PostErrors: 2}, s)

	jfr, err := jetty.NewJFR(p.b, jetty.JFRConfig{JFC: p.jfcB, Depth: 2})
	require.NoError(t, err)
	wrs := make([]jetty.RecvWR, 4)
	for i := range wrs {
		wrs[i] = jetty.RecvWR{UserCtx: uint64(i), Local: []segment.SGE{p.dst.SGE(0, 8)}}
	}
	require.Error(t, jfr.PostRecv(wrs))
	s, err = jfr.Stats()
	require.NoError(t, err)
	require.Equal(t, uint64(1), s.PostErrors)
	require.GreaterOrEqual(t, s.RecvPosted, uint64(2))
	require.NoError(t, jfr.Close())
	_, err = jfr.Stats()
	require.ErrorIs(t, err, urma.ErrClosed)
}

// TestStatsLockFreeRace reads a lock-free queue's and JFC's counters from
// another goroutine while the owner posts and polls: the race detector
// must see the reads synchronized.
func TestStatsLockFreeRace(t *testing.T) {
	p := lockFreePair(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			_, err := p.jfs.Stats()
			require.NoError(t, err)
			_, err = p.jfcA.Stats()
			require.NoError(t, err)
			_, err = p.a.Stats()
			require.NoError(t, err)
		}
	}()
	for i := 0; i < 500; i++ {
		require.NoError(t, p.jfs.Write(p.remote, p.tgt.SGE(0, 8), p.src.SGE(0, 8), jetty.Signaled, uint64(i)))
		pollAll(t, p.jfcA, 1)
	}
	<-done
	s, err := p.jfcA.Stats()
	require.NoError(t, err)
	require.Equal(t, uint64(500), s.Completions)
	js, err := p.jfs.Stats()
	require.NoError(t, err)
	require.Equal(t, urma.QueueStats{Posted: 500, Bytes: 4000}, js)
}

// TestPortCountersLoopback: loopback has no ports to count.
func TestPortCountersLoopback(t *testing.T) {
	dev, err := urma.DeviceByName(loopback.DeviceName)
	require.NoError(t, err)
	_, err = dev.PortCounters(1)
	require.ErrorIs(t, err, urma.ErrNotSupported)
}
