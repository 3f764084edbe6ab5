package perf

// haveTSC says rdtsc reads the time-stamp counter.
const haveTSC = true

// rdtsc returns the time-stamp counter (tsc_amd64.s).
func rdtsc() uint64
