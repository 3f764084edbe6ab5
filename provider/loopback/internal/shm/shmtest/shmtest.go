// Package shmtest holds what the tests of shared-memory rings share:
// producers run in goroutines of their own, and a check that each
// producer's values arrive once each, in order.
package shmtest

import (
	"sync"
	"testing"
)

// StartProducers runs produce(p) for producers p in their own goroutines;
// the returned function waits for them.
func StartProducers(producers int, produce func(p int)) (wait func()) {
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			produce(p)
		}()
	}
	return wg.Wait
}

// Arrivals checks that each producer's values arrive once each, in order.
type Arrivals []int

// NewArrivals expects value 0 next from each of producers.
func NewArrivals(producers int) Arrivals {
	a := make(Arrivals, producers)
	for p := range a {
		a[p] = -1
	}
	return a
}

// See records value n of producer p, failing t unless it is the one after
// that producer's last.
func (a Arrivals) See(t *testing.T, p, n int) {
	t.Helper()
	if p >= len(a) || n != a[p]+1 {
		t.Fatalf("value %d of producer %d after %v", n, p, a)
	}
	a[p] = n
}
