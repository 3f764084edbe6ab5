package perf

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/urma"
)

// recordEndpoints has every endpoint opened from now on to the end of the
// test recorded, and returns what was recorded so far.
func recordEndpoints(t *testing.T) func() []*endpoint {
	t.Helper()
	var mu sync.Mutex
	var eps []*endpoint
	endpointOpened = func(e *endpoint) {
		mu.Lock()
		defer mu.Unlock()
		eps = append(eps, e)
	}
	t.Cleanup(func() { endpointOpened = nil })
	return func() []*endpoint {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(eps)
	}
}

// TestLoops runs every test in every mode with the default loops and with
// --tuned. The default run creates no lock-free queue and prepares
// nothing on either side (its endpoints have no Prepare to call: what it
// posts goes through Post and PostRecv); the tuned run prepares its
// requests and makes its queues lock-free on both sides. The server
// follows the client's choice, and the report and the table say which
// loops ran.
func TestLoops(t *testing.T) {
	for _, tm := range testModes(t) {
		for _, tuned := range []bool{false, true} {
			t.Run(tm.name+"/"+loops(tuned), func(t *testing.T) {
				opened := recordEndpoints(t)
				cfg := Config{Test: tm.test, Mode: tm.mode, Iters: 300, Sizes: []int{64}, Tuned: tuned}
				if tm.test.Op == Atomic {
					cfg.Sizes = nil
				}
				rep, table, err := pair(t, cfg)
				require.NoError(t, err, table)
				if tm.test.BW {
					require.Len(t, rep.BW, 1, table)
					assert.Equal(t, 300, rep.BW[0].Iters)
				} else {
					require.Len(t, rep.Latency, 1, table)
					assert.Equal(t, 300, rep.Latency[0].Iters)
				}
				assert.Equal(t, tuned, rep.Tuned)
				assert.Equal(t, tuned, rep.LockFree)
				assert.Contains(t, table, " loops "+loops(tuned)+" ")

				eps := opened()
				require.Len(t, eps, 2, "a server and a client")
				for _, e := range eps {
					assert.Equal(t, tuned, e.cfg.Tuned, "both sides run the client's loops")
					assert.Equal(t, tuned, e.lockFree)
					if tuned {
						assert.Positive(t, e.prepared)
					} else {
						assert.Zero(t, e.prepared)
						assert.Nil(t, e.prepare)
						assert.Nil(t, e.prepareRecv)
					}
				}
			})
		}
	}
}

// TestLockFreeAlone: -L makes the queues of both sides lock-free and
// leaves the loops the default ones.
func TestLockFreeAlone(t *testing.T) {
	opened := recordEndpoints(t)
	rep, table, err := pair(t, Config{Test: Test{Op: Send}, Iters: 300, LockFree: true})
	require.NoError(t, err, table)
	assert.True(t, rep.LockFree)
	assert.False(t, rep.Tuned)
	assert.Contains(t, table, "lock-free queues")
	eps := opened()
	require.Len(t, eps, 2)
	for _, e := range eps {
		assert.True(t, e.lockFree)
		assert.Zero(t, e.prepared)
	}
}

// TestHelloCarriesTheLoops: the server reads the client's choice of loops
// and queues from the hello; a hello without the fields (a client that
// predates them) asks for the default loops, and the client's default
// hello leaves them out.
func TestHelloCarriesTheLoops(t *testing.T) {
	for _, c := range []Config{
		{Test: Test{Op: Write}},
		{Test: Test{Op: Write}, Tuned: true},
		{Test: Test{Op: Send, BW: true}, LockFree: true},
	} {
		b, err := json.Marshal(helloFor(c.Defaults(), endpointInfo{}))
		require.NoError(t, err)
		var h hello
		require.NoError(t, json.Unmarshal(b, &h))
		got, err := h.config()
		require.NoError(t, err)
		assert.Equal(t, c.Tuned, got.Tuned)
		assert.Equal(t, c.LockFree, got.LockFree)
		if !c.Tuned && !c.LockFree {
			assert.NotContains(t, string(b), "Tuned")
			assert.NotContains(t, string(b), "LockFree")
		}
	}
	old := `{"Version":1,"Test":"send_lat","Sizes":[2],"Iters":5,"Mode":1,"TxDepth":1,"RxDepth":512,"PostList":1,"CQMod":1}`
	var h hello
	require.NoError(t, json.Unmarshal([]byte(old), &h))
	cfg, err := h.config()
	require.NoError(t, err)
	assert.False(t, cfg.Tuned)
	assert.False(t, cfg.LockFree)
}

// TestAtomicResponderSpins: the atomic_lat server spins reading the word
// the client's atomics change, as ucx_perftest's responder does, sees it
// change, and ends with the client's "done" like any other server loop,
// with both loops and both operations.
func TestAtomicResponderSpins(t *testing.T) {
	for _, tuned := range []bool{false, true} {
		for _, cas := range []bool{false, true} {
			opened := recordEndpoints(t)
			cfg := Config{Test: Test{Op: Atomic}, Mode: urma.RM, Iters: 2000, CAS: cas, Tuned: tuned}
			rep, table, err := pair(t, cfg)
			require.NoError(t, err, table)
			require.Len(t, rep.Latency, 1)
			var responders int
			for _, e := range opened() {
				if e.responderReads > 0 {
					responders++
					assert.Positive(t, e.responderSeen, "tuned=%v cas=%v: the responder saw the word change", tuned, cas)
				}
			}
			assert.Equal(t, 1, responders, "tuned=%v cas=%v: the server, not the client, spins", tuned, cas)
		}
	}
}
