package main

import (
	"fmt"
	"slices"
	"strconv"
)

// summary sums up one row's paired rounds: each side's median, and the
// median, quartiles and extremes of the per-round ratios urmanet/reference.
// A ratio from each round's own pair cancels what the host did to both
// sides of that round, which a ratio of two medians does not.
type summary struct {
	rounds                     int
	ours, ref                  float64
	ratio, q1, q3, lowest, top float64
}

func summarize(ours, ref []float64) summary {
	ratios := make([]float64, len(ours))
	for i := range ours {
		ratios[i] = ours[i] / ref[i]
	}
	return summary{rounds: len(ours), ours: quantile(ours, 0.5), ref: quantile(ref, 0.5),
		ratio: quantile(ratios, 0.5), q1: quantile(ratios, 0.25), q3: quantile(ratios, 0.75),
		lowest: quantile(ratios, 0), top: quantile(ratios, 1)}
}

// quantile is the q-quantile of v by linear interpolation between the
// closest ranks (R's default, numpy's, and bench/internal/pairstat's), so
// that the median of an even count is the mean of the middle two. v is
// left as it was.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// num prints a figure with four significant digits, without an exponent.
func num(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return strconv.FormatFloat(roundSig(v, 4), 'f', -1, 64)
}

func roundSig(v float64, digits int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', digits, 64), 64)
	return f
}
