package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestHistBuckets(t *testing.T) {
	assert.Equal(t, 0, histIndex(0))
	assert.Equal(t, 63, histIndex(63))
	assert.Equal(t, 64, histIndex(64))
	assert.Equal(t, histBuckets-1, histIndex(^uint64(0)))
	// Indexes never go down, and each bucket's middle lies in it.
	prev := 0
	for v := uint64(0); v < 1<<20; v += 1 + v/97 {
		i := histIndex(v)
		assert.GreaterOrEqual(t, i, prev)
		prev = i
		assert.Equal(t, i, histIndex(histValue(i)), "value %d", v)
		if v >= histExact {
			assert.InEpsilon(t, float64(v), float64(histValue(i)), 1.0/histSub, "value %d", v)
		}
	}
}

func TestHistQuantiles(t *testing.T) {
	var h hist
	assert.Zero(t, h.quantile(0.5))
	assert.Zero(t, h.mean())
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Microsecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Microsecond}, {0.99, 990 * time.Microsecond}, {0.999, 999 * time.Microsecond}, {0.001, time.Microsecond}} {
		assert.InEpsilon(t, float64(tc.want), float64(h.quantile(tc.q)), 1.0/histSub, "q %v", tc.q)
	}
	assert.Equal(t, 1000*time.Microsecond, h.quantile(1))
	assert.Equal(t, 500500*time.Nanosecond, h.mean())

	var m hist
	m.record(-time.Second) // clamps to 0
	m.record(5 * time.Second)
	m.merge(&h)
	assert.Equal(t, uint64(1002), m.n)
	assert.Equal(t, 5*time.Second, m.quantile(1))
	assert.Zero(t, m.quantile(0.0001))
}
