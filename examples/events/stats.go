package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"
	"time"
)

// latency summarises round-trip samples.
type latency struct {
	p50, p99, p999, min, avg time.Duration
}

// summarize sorts samples in place.
func summarize(samples []time.Duration) latency {
	if len(samples) == 0 {
		return latency{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, s := range samples {
		sum += s
	}
	return latency{
		p50:  percentile(samples, 500),
		p99:  percentile(samples, 990),
		p999: percentile(samples, 999),
		min:  samples[0],
		avg:  sum / time.Duration(len(samples)),
	}
}

// percentile is the nearest-rank percentile of sorted samples, with p in
// tenths of a percent (integers, so that 99.9 is exact): a value that was
// measured, never an interpolation between two.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 999) / 1000
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// cpuTime is the user and system time of the whole process: every
// goroutine, the runtime's own threads, and in one process both sides.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// meter measures wall and CPU time from its start.
type meter struct {
	start time.Time
	cpu   time.Duration
}

func startMeter() (meter, error) {
	cpu, err := cpuTime()
	return meter{start: time.Now(), cpu: cpu}, err
}

func (m meter) stop() (wall, cpu time.Duration, err error) {
	wall = time.Since(m.start)
	now, err := cpuTime()
	return wall, now - m.cpu, err
}

// result is one mode's row. lat is nil on a server, which sees no round
// trips of its own.
type result struct {
	mode      string
	count     int
	lat       *latency
	wall, cpu time.Duration
}

var columns = []string{"mode", "p50_us", "p99_us", "p99.9_us", "min_us", "avg_us",
	"wall_ms", "cpu_ms", "cpu_per_rt_us", "cpu_util"}

// printTable writes the column names, or with r a row under them: the
// first column left-aligned, numbers right-aligned, one space apart, so
// that strings.Fields splits every line into the same columns.
func printTable(w io.Writer, r *result) {
	cells := columns
	if r != nil {
		us := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/1e3) }
		lat := []string{"-", "-", "-", "-", "-"}
		if r.lat != nil {
			lat = []string{us(r.lat.p50), us(r.lat.p99), us(r.lat.p999), us(r.lat.min), us(r.lat.avg)}
		}
		cells = append([]string{r.mode}, lat...)
		cells = append(cells,
			fmt.Sprintf("%.1f", float64(r.wall)/1e6),
			fmt.Sprintf("%.1f", float64(r.cpu)/1e6),
			us(r.cpu/time.Duration(r.count)),
			fmt.Sprintf("%.2f", ratio(r.cpu, r.wall)))
	}
	var b strings.Builder
	for i, c := range cells {
		width := max(len(columns[i]), 8)
		if i == 0 {
			fmt.Fprintf(&b, "%-5s", c)
			continue
		}
		fmt.Fprintf(&b, " %*s", width, c)
	}
	fmt.Fprintln(w, b.String())
}

// printComparison sums up the trade-off in one line: how many times the
// event mode's latency and CPU per round trip are the polling ones.
func printComparison(w io.Writer, poll, event result) {
	fmt.Fprint(w, "event/poll:")
	if poll.lat != nil && event.lat != nil {
		fmt.Fprintf(w, " p50 x%.3g, p99 x%.3g,", ratio(event.lat.p50, poll.lat.p50), ratio(event.lat.p99, poll.lat.p99))
	}
	fmt.Fprintf(w, " cpu_per_rt x%.3g\n", ratio(event.cpu/time.Duration(event.count), poll.cpu/time.Duration(poll.count)))
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}
