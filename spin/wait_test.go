package spin

import (
	"testing"
	"time"
)

// countYields replaces the system call with a count for the test.
func countYields(t *testing.T) *int {
	n := new(int)
	old := osYield
	osYield = func() { *n++ }
	t.Cleanup(func() { osYield = old })
	return n
}

// A wait shorter than OSYield never yields, however many turns it takes.
func TestWaitShortNeverYields(t *testing.T) {
	yields := countYields(t)
	for range 1000 {
		var w Wait
		start := Now()
		for i := 0; i < 10*waitCheck && Now()-start < OSYield/2; i++ {
			if w.Idle() {
				t.Fatalf("yielded %v into a wait", Now()-start)
			}
		}
	}
	if *yields != 0 {
		t.Fatalf("%d yields", *yields)
	}
}

// A long wait yields from OSYield on, about once each OSYield, never twice
// within one.
func TestWaitLongYieldsByTheClock(t *testing.T) {
	yields := countYields(t)
	var w Wait
	start := Now()
	var first time.Duration
	last := time.Duration(-1)
	for Now()-start < 40*OSYield {
		if w.Idle() {
			now := Now() - start
			if first == 0 {
				first = now
			}
			if last >= 0 && now-last < OSYield {
				t.Fatalf("two yields %v apart", now-last)
			}
			last = now
		}
	}
	if first < OSYield {
		t.Fatalf("first yield %v into the wait, before OSYield", first)
	}
	// 40 periods, the first spent spinning: at most 39 yields, and
	// at least a few however slowly this machine runs the loop.
	if *yields < 3 || *yields > 39 {
		t.Fatalf("%d yields in %v", *yields, 40*OSYield)
	}
}
