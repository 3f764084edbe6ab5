package spin

import "time"

// OSYield is how long one wait spins before it lets other threads have its
// core, and then how often it does. A busy-polling loop that shares its
// core with the process it waits for (two processes pinned to one core, or
// more spinning threads than cores) otherwise holds the core until the
// kernel preempts it at the end of its time slice, and every hand-off
// between the two costs a whole slice. A wait that ends within OSYield, as
// every wait of a latency or bandwidth loop between two cores does, never
// yields, so it pays nothing; urmactl perf send_bw or write_lat with both
// sides pinned to one core shows what the yield is for.
// runtime.Gosched cannot do this: it yields only to goroutines of the
// same process.
const OSYield = 50 * time.Microsecond

// waitCheck is how many idle turns pass between clock reads: a wait of a
// latency loop, tens of turns, reads no clock, which on its critical path
// would delay seeing the peer's answer.
const waitCheck = 1024

// Wait paces one wait of a polling loop: make one (the zero value) when the
// wait begins and call Idle on each turn that found nothing. It is not for
// concurrent use; a Pacer paces a loop as a whole.
type Wait struct {
	n       uint32
	started bool
	next    time.Duration // when Idle yields next
}

// Idle counts one fruitless turn. Once the wait has lasted OSYield it
// yields the core to the operating system's other threads (sched_yield),
// and again each OSYield after that; it reports whether it did.
func (w *Wait) Idle() bool {
	w.n++
	if w.n%waitCheck != 0 || !w.dueAt(Now()) {
		return false
	}
	osYield()
	w.yieldedAt(Now())
	return true
}

// dueAt tells whether a wait whose clock reads now should yield: the
// first read starts the wait's clock. Idle's decision, on any clock.
func (w *Wait) dueAt(now time.Duration) bool {
	if !w.started {
		w.started, w.next = true, now+OSYield
		return false
	}
	return now >= w.next
}

// yieldedAt schedules the next yield one OSYield after a yield that
// ended at now (a yield can take a while when others want the core).
func (w *Wait) yieldedAt(now time.Duration) { w.next = now + OSYield }

// osYield is a variable so that tests can count the yields.
var osYield = yieldCore
