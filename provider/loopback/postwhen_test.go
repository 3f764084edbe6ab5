package loopback_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// A PostWhen that watches its flag holds its queue's lock for a few
// microseconds at a time (PostOnFlag): requests posted meanwhile on the
// same queue, and an Unregister of the segment it writes to, wait their
// turn and go through, and the answer still leaves once the flag is set.
func TestPostWhenSharesItsQueue(t *testing.T) {
	p := newPair(t)
	answer, word, flag := flaggedAnswer(t, p, 7, 64, "answered")

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- answer.PostWhen(ctx, flag, 1)
	}()
	for i := range 200 {
		require.NoError(t, p.jfs.NOP(0, uint64(100+i)), "NOP %d while PostWhen watches", i)
		cr := pollFor(t, p.jfcA)
		require.Equal(t, uint64(100+i), cr.UserCtx)
	}
	select {
	case err := <-done:
		t.Fatalf("PostWhen returned %v before its flag was set", err)
	default:
	}
	require.Equal(t, make([]byte, 8), p.dst.Bytes()[64:72], "nothing written before the flag")
	word.Store(1)
	require.NoError(t, <-done)
	cr := pollFor(t, p.jfcA)
	require.Equal(t, urma.CRSuccess, cr.Status, "%v", cr)
	require.Equal(t, uint64(7), cr.UserCtx)
	require.Equal(t, "answered", string(p.dst.Bytes()[64:72]))

	// The target goes away while the answer waits: the Unregister waits
	// for the watch to let the queue go, and the answer, once its flag is
	// set, completes as a post to an unregistered segment does.
	word.Store(0)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- answer.PostWhen(ctx, flag, 1)
	}()
	time.Sleep(time.Millisecond)
	require.NoError(t, p.dst.Unregister())
	word.Store(1)
	if err := <-done; err == nil {
		cr := pollFor(t, p.jfcA)
		require.NotEqual(t, urma.CRSuccess, cr.Status, "a WRITE into an unregistered segment: %v", cr)
	}
}

// A PostWhen whose flag never comes returns its context's error once the
// context ends, and posts nothing: the watches in between are bounded by
// the clock, so a slow read of the flag (the race detector in an emulated
// guest) cannot hold the check of the context off for long.
func TestPostWhenEndsWithItsContext(t *testing.T) {
	p := newPair(t)
	answer, word, flag := flaggedAnswer(t, p, 9, 0, "too late")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- answer.PostWhen(ctx, flag, 1) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("PostWhen ran on 5 s after its context ended")
	}
	word.Store(1)
	require.NoError(t, p.jfs.NOP(0, 1))
	cr := pollFor(t, p.jfcA)
	require.Equal(t, uint64(1), cr.UserCtx, "the NOP is the first record: the answer never left")
	require.Equal(t, make([]byte, 8), p.dst.Bytes()[:8], "nothing written")
}

// flaggedAnswer prepares an 8-byte signaled WRITE of msg from p.src to
// offset off of p.tgt, and a word whose low byte is its flag (amd64 and
// arm64 are little-endian).
func flaggedAnswer(t *testing.T, p *pair, userCtx uint64, off uint64, msg string) (*jetty.Prepared, *atomic.Uint32, *byte) {
	t.Helper()
	answer, err := p.jfs.Prepare(jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: p.remote, UserCtx: userCtx,
		Local: []segment.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(off, 8)})
	require.NoError(t, err)
	copy(p.src.Bytes(), msg)
	word := new(atomic.Uint32)
	return answer, word, (*byte)(unsafe.Pointer(word))
}

// pollFor polls jfc until one record arrives, for up to 5 s.
func pollFor(t *testing.T, jfc *jetty.JFC) jetty.CR {
	t.Helper()
	crs := make([]jetty.CR, 1)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		n, err := jfc.Poll(crs)
		require.NoError(t, err)
		if n == 1 {
			return crs[0]
		}
	}
	t.Fatal("no record in 5 s")
	return jetty.CR{}
}
