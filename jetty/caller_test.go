package jetty_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

func TestCaller(t *testing.T) {
	owner, peer := open(0), open(1)
	t.Cleanup(func() { _ = peer.Close(); _ = owner.Close() })
	word, err := segment.Alloc(owner, 64, segment.Config{Access: segment.Read | segment.Write | segment.Atomic})
	require.NoError(t, err)
	jfc, err := jetty.NewJFC(owner, jetty.JFCConfig{Depth: 4})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(owner, jetty.JFRConfig{Depth: 4, JFC: jfc})
	require.NoError(t, err)
	tgt, err := segment.Import(t.Context(), peer, word.Descriptor(), 0)
	require.NoError(t, err)
	to, err := jetty.ImportJFR(t.Context(), peer, jfr.Descriptor(), 0)
	require.NoError(t, err)
	c, err := jetty.NewCaller(peer, to)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()); require.NoError(t, c.Close(), "idempotent") })

	for want := range uint64(3) {
		old, err := c.FetchAdd(t.Context(), tgt.SGE(8, 8), 1)
		require.NoError(t, err)
		require.Equal(t, want, old)
	}
	old, err := c.CompareSwap(t.Context(), tgt.SGE(8, 8), 3, 40)
	require.NoError(t, err)
	require.Equal(t, uint64(3), old, "swapped")
	old, err = c.CompareSwap(t.Context(), tgt.SGE(8, 8), 3, 50)
	require.NoError(t, err)
	require.Equal(t, uint64(40), old, "not swapped: the old value says why")

	// Concurrent calls run one at a time, each with its own old value.
	var wg sync.WaitGroup
	seen := make(chan uint64, 200)
	for range 4 {
		wg.Go(func() {
			for range 50 {
				old, err := c.FetchAdd(context.Background(), tgt.SGE(16, 8), 1)
				if err != nil {
					t.Error(err)
					return
				}
				seen <- old
			}
		})
	}
	wg.Wait()
	close(seen)
	got := map[uint64]bool{}
	for v := range seen {
		require.False(t, got[v], "old value %d returned twice", v)
		got[v] = true
	}
	require.Len(t, got, 200)
	w, err := word.Uint64(16)
	require.NoError(t, err)
	require.Equal(t, uint64(200), w.Load())

	// A done context: the call fails with its error or completes; the
	// next one is right either way.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.FetchAdd(ctx, tgt.SGE(24, 8), 1); err != nil {
		require.ErrorIs(t, err, context.Canceled)
	}
	before, err := word.Uint64(24)
	require.NoError(t, err)
	b := before.Load()
	old, err = c.FetchAdd(t.Context(), tgt.SGE(24, 8), 1)
	require.NoError(t, err)
	require.Equal(t, b, old)

	_, err = c.FetchAdd(t.Context(), tgt.SGE(60, 8), 1)
	require.ErrorIs(t, err, urma.ErrInvalid, "an unaligned word: refused at post")
	_, err = c.FetchAdd(t.Context(), tgt.SGE(64, 8), 1)
	var ce *jetty.CRError
	require.ErrorAs(t, err, &ce, "past the segment's end: the request completes with an error")
	require.Equal(t, urma.CRRemAccessAbortErr, ce.Status)
	old, err = c.FetchAdd(t.Context(), tgt.SGE(24, 8), 1)
	require.NoError(t, err)
	require.Equal(t, b+1, old, "a failed call leaves the Caller usable")
	_, err = jetty.NewCaller(peer, nil)
	require.ErrorIs(t, err, urma.ErrInvalid)
}
