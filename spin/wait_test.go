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

// A long wait yields from OSYield on, once each OSYield, never twice
// within one: a made-up clock checked every 7 us for 40 OSYields, each
// yield taking 20 us.
func TestWaitLongYieldsEveryOSYield(t *testing.T) {
	const step, yieldTakes = 7 * time.Microsecond, 20 * time.Microsecond
	var w Wait
	start := time.Second
	var yields []time.Duration
	for now := start; now-start < 40*OSYield; now += step {
		if w.dueAt(now) {
			yields = append(yields, now-start)
			now += yieldTakes
			w.yieldedAt(now)
		}
	}
	if len(yields) == 0 || yields[0] < OSYield || yields[0] >= OSYield+step {
		t.Fatalf("yields at %v, want the first at OSYield (%v) into the wait", yields, OSYield)
	}
	for i := 1; i < len(yields); i++ {
		gap := yields[i] - yields[i-1]
		if gap < OSYield+yieldTakes || gap >= OSYield+yieldTakes+step {
			t.Fatalf("yields %d and %d came %v apart, want OSYield after the last one ended (%v)", i-1, i, gap, OSYield+yieldTakes)
		}
	}
	// After the first, at OSYield, one yield per OSYield+yieldTakes (plus
	// up to a step) of the remaining 39 OSYields.
	rest := 40*OSYield - yields[0]
	least, most := int(rest/(OSYield+yieldTakes+step))+1, int(rest/(OSYield+yieldTakes))+1
	if n := len(yields); n < least || n > most {
		t.Fatalf("%d yields, want %d to %d", n, least, most)
	}
}

// Idle on the real clock yields once a wait has lasted OSYield.
func TestWaitIdleYieldsOnTheClock(t *testing.T) {
	yields := countYields(t)
	var w Wait
	start := Now()
	for *yields == 0 && Now()-start < time.Second {
		if w.Idle() && Now()-start < OSYield {
			t.Fatalf("yielded %v into the wait", Now()-start)
		}
	}
	if *yields == 0 {
		t.Fatalf("no yield in a second of waiting")
	}
}
