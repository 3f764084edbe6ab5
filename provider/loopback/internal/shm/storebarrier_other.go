//go:build !amd64

package shm

import "sync/atomic"

// StoreBarrier keeps the stores before it ahead of those after it: an
// atomic read-modify-write is acquire + release on arm64 (LDADDAL), and
// the compiler moves no access across it.
func StoreBarrier() {
	var b atomic.Uint32
	b.Add(1)
}
