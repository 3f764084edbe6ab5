// Package spin paces busy-polling loops: how often a spinning goroutine
// reads the clock and yields to Go's scheduler. Put a Pacer in any loop
// that polls memory (a HERD-style request slot, the last byte of a
// WRITE); jetty.JFC.PollWait has one for completion queues.
//
// A goroutine that never yields is "long-running" to Go's sysmon thread:
// sysmon preempts it after a scheduling quantum and, when it finds it
// inside a cgo call (a verbs post or poll), takes its processor away; each
// take resets sysmon's sleep to its shortest, so it then wakes thousands
// of times a second and steals the CPU the peer and the kernel's rxe
// workers need. Yielding every so many spins instead costs a thread
// woken by each runtime.Gosched, and a count of spins is a different time
// on hardware and under emulation. Yielding by the clock avoids both
// (bench/ib-perftest compares the ib provider's latency with perftest's).
// The yield is also what lets a stop-the-world reach a loop that only
// reads memory under GODEBUG=asyncpreemptoff=1. A Pacer reads the clock
// every 256 ticks, and more often when its ticks are slow (a tick that is
// itself a spin in C), so that the yield comes once per Yield whatever a
// tick costs.
//
// A Wait paces one wait for the other end: past OSYield it gives the
// core to the operating system's other threads now and then, for a peer
// process that may share the core.
package spin

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"
)

const (
	// Yield is the time between yields: well inside sysmon's 10 ms
	// preemption quantum.
	Yield = 5 * time.Millisecond
	// check is how many ticks pass between clock reads at most: in a
	// guest without a usable TSC a clock read is a system call.
	check = 1 << maxShift
	// maxShift is how far a Pacer may halve check, to a read per tick.
	maxShift = 8
	// readGap is the longest a Pacer lets pass between clock reads: a
	// loop whose ticks are slow (a tick that is itself a spin in a cgo
	// call, longer under emulation) reads the clock more often, one whose
	// ticks are fast less often again. At a fixed check ticks apart, slow
	// ticks could put a read, and so the yield, past sysmon's quantum,
	// and sysmon would preempt the loop and poll at its shortest sleep
	// from then on, on the CPU the peer's workers need.
	readGap = Yield / 8
)

// base is the origin of the pacers' monotonic clock reads.
var base = time.Now()

// Now is the time since the package started, from the monotonic clock
// alone (time.Now also reads the wall clock).
func Now() time.Duration { return time.Since(base) }

// Pacer yields a spinning goroutine to Go's scheduler once per Yield,
// however long each spin takes. The zero value is ready. It is safe for
// concurrent use, so that the calls of a wait loop on several goroutines
// (or one short call after another) share one pace.
type Pacer struct {
	n uint32 // only through bump
	// shift halves check: the clock is read every check>>shift ticks.
	shift atomic.Uint32
	// read is when the clock was last read, zero before the first read.
	read atomic.Int64
	last atomic.Int64
}

// Tick counts one spin or one loop iteration and yields when Yield has
// passed since the last yield. It reports whether it yielded: a good
// moment for a loop to look at its stop condition.
func (p *Pacer) Tick() bool {
	if !p.due() || !p.yieldAt(Now()) {
		return false
	}
	runtime.Gosched()
	return true
}

// due counts a tick and reports whether it is one that reads the clock.
func (p *Pacer) due() bool {
	return bump(&p.n)&(check>>p.shift.Load()-1) == 0
}

// yieldAt takes a clock read, now, and reports whether the loop yields:
// Tick without the clock and the scheduler, so that tests can drive it
// with made-up times.
func (p *Pacer) yieldAt(now time.Duration) bool {
	p.adapt(now)
	if now-time.Duration(p.last.Load()) < Yield {
		return false
	}
	p.last.Store(int64(now))
	return true
}

// adapt divides or doubles the ticks between clock reads so that reads
// come between readGap/16 and readGap apart (a clock read is cheap on
// hardware but a system call in a guest without a TSC clocksource, so a
// fast loop must not read it often either). Racing callers may both move
// shift; it stays within its bounds.
func (p *Pacer) adapt(now time.Duration) {
	prev := time.Duration(p.read.Swap(int64(now)))
	if prev == 0 {
		return
	}
	switch sh, gap := p.shift.Load(), now-prev; {
	case gap > readGap && sh < maxShift:
		// As many halvings as the gap is readGaps long, at once: the
		// first read comes check ticks late, and the next ones must not.
		p.shift.CompareAndSwap(sh, min(sh+uint32(bits.Len64(uint64(gap/readGap))), maxShift))
	case gap < readGap/16 && sh > 0:
		p.shift.CompareAndSwap(sh, sh-1)
	}
}
