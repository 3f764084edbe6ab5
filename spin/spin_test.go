package spin

import (
	"testing"
	"time"
)

func TestPacerYieldsByTheClock(t *testing.T) {
	var p Pacer
	start := Now()
	yields := 0
	for Now()-start < 60*time.Millisecond {
		if p.Tick() {
			yields++
		}
	}
	// 60 ms of spinning is 12 periods of 5 ms: the first check yields at
	// once, and no period can hold two yields.
	if yields < 2 || yields > 13 {
		t.Fatalf("%d yields in 60 ms, want one per %v", yields, Yield)
	}
}

func TestPacerReadsTheClockRarely(t *testing.T) {
	// A zero Pacer yields at its first clock read once Yield has passed
	// since the package started.
	time.Sleep(Yield - Now())
	var p Pacer
	for i := 1; i < check; i++ {
		if p.Tick() {
			t.Fatalf("yielded at tick %d, before the first clock read", i)
		}
	}
	if !p.Tick() {
		t.Fatal("the first clock read did not yield")
	}
	if p.Tick() {
		t.Fatal("yielded again at once")
	}
}
