//go:build !race

package main

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// A request allocates nothing, in either waiting mode, whether the send
// queues have room or refuse posts while full: a run of many requests
// allocates what a short one does (its setup), give or take the runtime's
// own. The race detector allocates on its own, so this is left out of
// -race builds.
func TestRequestsDoNotAllocate(t *testing.T) {
	for _, mode := range []string{"poll", "event"} {
		t.Run(mode, func(t *testing.T) {
			mallocs := func(requests string) uint64 {
				var a, b runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&a)
				res, _, err := runArgs(t, "-mode", mode, "-requests", requests, "-keys", "1000", "-duration", "0")
				require.NoError(t, err)
				runtime.ReadMemStats(&b)
				require.Positive(t, res.requests)
				return b.Mallocs - a.Mallocs
			}
			short, long := mallocs("20000"), mallocs("220000")
			// One allocation in a thousand requests would be 200 more.
			require.Less(t, int64(long)-int64(short), int64(100),
				"200000 more requests allocated %d more times", int64(long)-int64(short))
		})
	}
}
