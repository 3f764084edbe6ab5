package main

import (
	"math"
	"math/bits"
	"time"
)

// hist is a latency histogram with a fixed error instead of a sample list:
// values below histExact have a bucket each, larger ones histSub buckets
// per power of two (each at most 1/histSub of its values wide). Recording
// does not allocate.
type hist struct {
	counts [histBuckets]uint64
	n      uint64
	sum    uint64
	max    uint64
}

const (
	histSubBits = 5
	histSub     = 1 << histSubBits
	histExact   = 2 * histSub
	histBuckets = histExact + (64-histSubBits-1)*histSub
)

func histIndex(v uint64) int {
	if v < histExact {
		return int(v)
	}
	e := bits.Len64(v) - histSubBits - 1 // v>>e is in [histSub, 2*histSub)
	return histExact + (e-1)*histSub + int(v>>e) - histSub
}

// histValue is the middle of bucket i.
func histValue(i int) uint64 {
	if i < histExact {
		return uint64(i)
	}
	e := (i-histExact)/histSub + 1
	m := uint64((i-histExact)%histSub + histSub)
	return m<<e + 1<<(e-1)
}

func (h *hist) record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[histIndex(v)]++
	h.n++
	h.sum += v
	h.max = max(h.max, v)
}

func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// quantile is the value at or below which the fraction q of the records
// lie (0 < q <= 1), within the bucket's width; the largest one for q = 1.
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	if q >= 1 {
		return time.Duration(h.max)
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		if seen += c; seen >= rank {
			return time.Duration(min(histValue(i), h.max))
		}
	}
	return time.Duration(h.max)
}

func (h *hist) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / h.n)
}

// counts are what one client saw.
type counts struct {
	gets, puts, found, missing, unchecked uint64
}

func (c *counts) add(o counts) {
	c.gets += o.gets
	c.puts += o.puts
	c.found += o.found
	c.missing += o.missing
	c.unchecked += o.unchecked
}

// us formats a duration in microseconds.
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
