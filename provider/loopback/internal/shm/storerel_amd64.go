//go:build amd64 && !race

package shm

// StoreRelease stores v at p with release ordering. On amd64 (total store
// order) a plain MOV has it, as the runtime's own StoreRel does; Go's
// atomic.Store is an XCHG, a full fence that waits for every store before
// it to own its cache line. The compiler keeps a plain store in program
// order with the atomic operations around it. The race detector build
// uses atomic.Store (storerel_other.go); on the rings' shared mappings the
// detector ignores atomics, and racesync_race.go gives it their edges.
func StoreRelease(p *uint64, v uint64) { *p = v }
