//go:build !amd64

package perf

// haveTSC is false: the stopwatch uses the monotonic clock.
const haveTSC = false

func rdtsc() uint64 { return 0 }
