//go:build !amd64 || race

package shm

import "sync/atomic"

// StoreRelease stores v at p with (at least) release ordering: Go's
// atomic.Store where plain stores are not ordered (see
// storerel_amd64.go).
func StoreRelease(p *uint64, v uint64) { atomic.StoreUint64(p, v) }
