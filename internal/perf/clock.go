package perf

import (
	"os"
	"strings"
	"time"
)

// stopwatch timestamps a latency loop's iterations. Where the kernel keeps
// time by the TSC (its clocksource is "tsc": the counter is invariant and
// synchronized across CPUs), a timestamp is one RDTSC, as perftest's
// get_cycles and UCX's ucs_get_time are: reading the counter directly
// costs less than time.Since, a cost the loop would pay on its critical
// path, between seeing the peer's message and posting the next one.
// Elsewhere it is time.Since of a monotonic base. Ticks become
// nanoseconds by the ratio of the two clocks over the loop.
type stopwatch struct {
	tsc   bool
	base  time.Time
	start uint64
}

// tscTrusted says whether the kernel's clocksource is the TSC; read once.
var tscTrusted = func() bool {
	if !haveTSC {
		return false
	}
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return err == nil && strings.TrimSpace(string(b)) == "tsc"
}()

func startStopwatch() stopwatch {
	s := stopwatch{tsc: tscTrusted, base: time.Now()}
	if s.tsc {
		s.start = rdtsc()
	}
	return s
}

// now is a timestamp in the stopwatch's ticks.
func (s *stopwatch) now() int64 {
	if s.tsc {
		return int64(rdtsc() - s.start)
	}
	return int64(time.Since(s.base))
}

// nanos returns how to turn ticks into nanoseconds: the nanoseconds per
// tick measured from the start until now.
func (s *stopwatch) nanos() float64 {
	if !s.tsc {
		return 1
	}
	ticks := rdtsc() - s.start
	elapsed := time.Since(s.base)
	if ticks == 0 {
		return 1
	}
	return float64(elapsed) / float64(ticks)
}

// durations turns the readings samples[0..n] into the n spans between
// them, in nanoseconds, in samples[:n].
func (s *stopwatch) durations(samples []int64, n int) {
	perTick := s.nanos()
	for j := range n {
		samples[j] = int64(float64(samples[j+1]-samples[j]) * perTick)
	}
}
