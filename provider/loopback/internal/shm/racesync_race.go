//go:build race

package shm

import (
	"runtime"
	"unsafe"
)

// The race detector ignores atomic operations outside the Go heap, and the
// rings live in shared mappings: without help it sees no order between a
// goroutine that fills a receive buffer and publishes the record and one
// that polls the record and reads the buffer, and reports a race in the
// user's program that is not there. In race builds each ring's publish is
// also a release, and each consume an acquire, on the ring's Go object,
// which the producers and consumers of one process share: the edges the
// ring's atomics really make, where the detector can see them.

// raceReleaseRing marks a publish into r.
func raceReleaseRing(r *Ring) { runtime.RaceReleaseMerge(unsafe.Pointer(r)) }

// raceAcquireRing marks a consume from r.
func raceAcquireRing(r *Ring) { runtime.RaceAcquire(unsafe.Pointer(r)) }
