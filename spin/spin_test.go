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

func TestPacerYieldsOnTimeWhenTicksAreSlow(t *testing.T) {
	// Ticks 200 us apart on a made-up clock (a poll that is itself a spin
	// in C): check of them are 51 ms, ten Yields. A Pacer that read the
	// clock every check ticks would yield 3 times in 200 ms; this one
	// reads it more often from its second read on and then yields once
	// per Yield, never later than one readGap past it.
	const tick = 200 * time.Microsecond
	var p Pacer
	now := time.Second
	var yields []time.Duration
	for range 1000 {
		now += tick
		if p.due() && p.yieldAt(now) {
			yields = append(yields, now)
		}
	}
	if len(yields) < 15 {
		t.Fatalf("%d yields in 200 ms of 200 us ticks, want about one per %v", len(yields), Yield)
	}
	for i := 2; i < len(yields); i++ {
		if gap := yields[i] - yields[i-1]; gap < Yield || gap > Yield+readGap {
			t.Fatalf("yields %d and %d came %v apart, want %v to %v", i-1, i, gap, Yield, Yield+readGap)
		}
	}
	// Fast ticks again: reads go back to check ticks apart.
	for range 10 * check {
		now += 10 * time.Nanosecond
		if p.due() {
			p.yieldAt(now)
		}
	}
	if sh := p.shift.Load(); sh != 0 {
		t.Fatalf("clock read every %d fast ticks, want every %d", check>>sh, check)
	}
}

func TestPacerAdaptsItsReadsToTheGap(t *testing.T) {
	var p Pacer
	now := time.Second
	read := func(gap time.Duration) uint32 {
		now += gap
		p.adapt(now)
		return check >> p.shift.Load()
	}
	if every := read(0); every != check {
		t.Fatalf("the first read moved the pace to every %d ticks", every)
	}
	// 51 ms since the last read, 81 readGaps: seven halvings at once.
	if every := read(51 * time.Millisecond); every != 2 {
		t.Fatalf("after a 51 ms gap, a read every %d ticks, want 2", every)
	}
	// Gaps within readGap/16..readGap leave it.
	if every := read(readGap / 2); every != 2 {
		t.Fatalf("after a gap of readGap/2, a read every %d ticks, want 2", every)
	}
	if every := read(time.Hour); every != 1 {
		t.Fatalf("after an hour, a read every %d ticks, want 1 (the bound)", every)
	}
	// Short gaps double it back, one step a read.
	for want := uint32(2); want <= check; want *= 2 {
		if every := read(time.Microsecond); every != want {
			t.Fatalf("a read every %d ticks after a short gap, want %d", every, want)
		}
	}
	if every := read(time.Microsecond); every != check {
		t.Fatalf("a read every %d ticks, want at most every %d", every, check)
	}
}
