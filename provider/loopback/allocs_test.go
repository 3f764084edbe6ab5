//go:build !race

package loopback_test

import "testing"

// The race detector allocates on its own, so this file is left out of -race
// builds; the default test run still checks it.
func TestDataPathDoesNotAllocate(t *testing.T) {
	p := newPair(t)
	var i uint64
	cases := map[string]func(){
		"write+poll":     func() { p.writePoll(t, 64) },
		"send/recv+poll": func() { p.sendRecvPoll(t, 64) },
		"cas+poll":       func() { p.casPoll(t, i); i++ },
	}
	for name, f := range cases {
		f() // warm up: first-use allocations are not steady state
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s: %.1f allocations per op, want 0", name, n)
		}
	}
}
