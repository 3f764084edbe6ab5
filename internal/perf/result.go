package perf

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// LatResult is one row of the latency table, in microseconds.
type LatResult struct {
	Bytes  int     `json:"bytes"`
	Iters  int     `json:"iterations"`
	Min    float64 `json:"t_min_us"`
	Max    float64 `json:"t_max_us"`
	Median float64 `json:"t_median_us"`
	Avg    float64 `json:"t_avg_us"`
	Stdev  float64 `json:"t_stdev_us"`
	P99    float64 `json:"p99_us"`
	P999   float64 `json:"p99_9_us"`
	P9999  float64 `json:"p99_99_us"`
	P99999 float64 `json:"p99_999_us"`
	// AllocsPerOp counts heap allocations of the whole process during the
	// timed loop, per iteration.
	AllocsPerOp float64 `json:"allocs_per_op"`
}

// BWResult is one row of the bandwidth table. MB is 2^20 bytes, as in
// perftest.
type BWResult struct {
	Bytes       int     `json:"bytes"`
	Iters       int     `json:"iterations"`
	PeakMBs     float64 `json:"bw_peak_mb_s"`
	AvgMBs      float64 `json:"bw_average_mb_s"`
	MsgRateMpps float64 `json:"msg_rate_mpps"`
	AllocsPerOp float64 `json:"allocs_per_op"`
}

// latResult sorts samples (nanoseconds) and summarizes them; halve
// reports half of each, for tests that time a round trip.
func latResult(size int, samples []int64, halve bool) LatResult {
	slices.Sort(samples)
	div := 1e3
	if halve {
		div = 2e3
	}
	us := func(ns float64) float64 { return ns / div }
	n := len(samples)
	r := LatResult{Bytes: size, Iters: n}
	if n == 0 {
		return r
	}
	var sum float64
	for _, s := range samples {
		sum += float64(s)
	}
	mean := sum / float64(n)
	var sq float64
	for _, s := range samples {
		d := float64(s) - mean
		sq += d * d
	}
	pct := func(q float64) float64 {
		i := int(math.Ceil(q*float64(n))) - 1
		return us(float64(samples[max(0, min(i, n-1))]))
	}
	r.Min, r.Max = us(float64(samples[0])), us(float64(samples[n-1]))
	r.Median = us(float64(samples[n/2]))
	r.Avg, r.Stdev = us(mean), us(math.Sqrt(sq/float64(n)))
	r.P99, r.P999, r.P9999, r.P99999 = pct(0.99), pct(0.999), pct(0.9999), pct(0.99999)
	return r
}

// bwResult turns a bandwidth run into a row.
func bwResult(size int, o bwOutcome) BWResult {
	const mb = 1 << 20
	rate := float64(o.iters) / o.elapsed.Seconds()
	return BWResult{Bytes: size, Iters: o.iters, PeakMBs: o.peak * float64(size) / mb,
		AvgMBs: rate * float64(size) / mb, MsgRateMpps: rate / 1e6}
}

// Report is a whole run: what ran where, and a row per size.
type Report struct {
	Test     string        `json:"test"`
	Provider string        `json:"provider"`
	Device   string        `json:"device"`
	Mode     string        `json:"mode"`
	Event    bool          `json:"event"`
	Spin     time.Duration `json:"spin_ns,omitempty"`
	Inline   int           `json:"inline"`
	TxDepth  int           `json:"tx_depth"`
	PostList int           `json:"post_list,omitempty"`
	CQMod    int           `json:"cq_mod,omitempty"`
	Duration time.Duration `json:"duration_ns,omitempty"`
	// Tuned is whether the run used the tuned loops (--tuned) rather
	// than the default ones; LockFree whether its queues were lock-free
	// (-L, or implied by --tuned).
	Tuned    bool        `json:"tuned"`
	LockFree bool        `json:"lock_free"`
	Latency  []LatResult `json:"latency,omitempty"`
	BW       []BWResult  `json:"bandwidth,omitempty"`
	// Error is why the run failed, empty when it did not; the rows are
	// the sizes that finished before.
	Error string `json:"error,omitempty"`
}

const rule = "---------------------------------------------------------------------------------------"

// header prints the banner and the column titles.
func (r *Report) header(w io.Writer, bw bool) {
	wait := "poll"
	if r.Event {
		wait = "event"
		if r.Spin > 0 {
			wait = fmt.Sprintf("event after a %v spin", r.Spin)
		}
	}
	fmt.Fprintln(w, rule)
	fmt.Fprintf(w, " %s  provider %s  device %s  mode %s  %s  inline %d  tx depth %d", r.Test, r.Provider, r.Device, r.Mode, wait, r.Inline, r.TxDepth)
	if bw {
		fmt.Fprintf(w, "  post list %d  cq mod %d", r.PostList, r.CQMod)
	}
	fmt.Fprintln(w)
	queues := "default queues"
	if r.LockFree {
		queues = "lock-free queues"
	}
	fmt.Fprintf(w, " loops %s (%s)  %s\n", loops(r.Tuned), loopsAPI(r.Tuned), queues)
	fmt.Fprintln(w, rule)
	if bw {
		fmt.Fprintf(w, " %-10s %-13s %-18s %-22s %-14s\n", "#bytes", "#iterations", "BW peak[MB/sec]", "BW average[MB/sec]", "MsgRate[Mpps]")
		return
	}
	fmt.Fprintf(w, " %-10s %-13s %-11s %-11s %-13s %-11s %-13s %-10s %-10s %-10s %-10s\n", "#bytes", "#iterations",
		"t_min[us]", "t_max[us]", "t_median[us]", "t_avg[us]", "t_stdev[us]", "99%[us]", "99.9%[us]", "99.99%[us]", "99.999%[us]")
}

// row prints one size's line.
func latRow(w io.Writer, r LatResult) {
	fmt.Fprintf(w, " %-10d %-13d %-11.2f %-11.2f %-13.2f %-11.2f %-13.2f %-10.2f %-10.2f %-10.2f %-10.2f\n", r.Bytes, r.Iters,
		r.Min, r.Max, r.Median, r.Avg, r.Stdev, r.P99, r.P999, r.P9999, r.P99999)
}

func bwRow(w io.Writer, r BWResult) {
	fmt.Fprintf(w, " %-10d %-13d %-18.2f %-22.2f %-14.6f\n", r.Bytes, r.Iters, r.PeakMBs, r.AvgMBs, r.MsgRateMpps)
}

// footer closes the table with the allocation count.
func (r *Report) footer(w io.Writer) {
	var worst float64
	for _, l := range r.Latency {
		worst = max(worst, l.AllocsPerOp)
	}
	for _, b := range r.BW {
		worst = max(worst, b.AllocsPerOp)
	}
	fmt.Fprintln(w, rule)
	fmt.Fprintf(w, " heap allocations per operation: %.3f\n", worst)
}

// JSON writes the report as one JSON document.
func (r *Report) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// loops names the loops of a run, tuned or default.
func loops(tuned bool) string {
	if tuned {
		return "tuned"
	}
	return "default"
}

// loopsAPI says what the loops post and poll with.
func loopsAPI(tuned bool) string {
	if tuned {
		return "Prepared, PreparedRecv, PostAfter/PostWhen, PollWait"
	}
	return "Post, PostRecv, Poll"
}

// modeName is the -p spelling of a mode.
func modeName(m fmt.Stringer) string { return strings.ToUpper(m.String()) }
