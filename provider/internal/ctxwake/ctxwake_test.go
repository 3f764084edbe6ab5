package ctxwake_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider/internal/ctxwake"
)

func TestWatch(t *testing.T) {
	var wakes atomic.Int32
	w := ctxwake.Watch{Wake: func() { wakes.Add(1) }}
	woke := func(n int32) {
		t.Helper()
		require.Eventually(t, func() bool { return wakes.Load() == n }, time.Second, time.Millisecond)
		time.Sleep(10 * time.Millisecond)
		require.Equal(t, n, wakes.Load(), "one wake per context")
	}

	w.On(context.Background()) // never done: nothing to watch
	a, cancelA := context.WithCancel(context.Background())
	for range 3 {
		w.On(a) // registered once
	}
	cancelA()
	woke(1)

	b, cancelB := context.WithCancel(context.Background())
	c, cancelC := context.WithCancel(context.Background())
	w.On(b)
	w.On(c) // replaces b
	cancelB()
	cancelC()
	woke(2)

	d, cancelD := context.WithCancel(context.Background())
	w.On(d)
	w.Stop()
	cancelD()
	woke(2)
}

func TestAllocations(t *testing.T) {
	w := ctxwake.Watch{Wake: func() {}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.On(ctx)
	require.Zero(t, testing.AllocsPerRun(100, func() { w.On(ctx) }), "a wait again with the same context")
	w.Stop()
}
