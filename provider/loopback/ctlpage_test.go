package loopback

import (
	"testing"
	"unsafe"
)

// The access counts that the owner's own accesses write live apart from
// the entries that importers on other cores read for every request: no
// cache line of the page holds both.
func TestCtlPageCountsApart(t *testing.T) {
	p, err := newCtlPage()
	if err != nil {
		t.Fatal(err)
	}
	defer p.release()
	base := uintptr(unsafe.Pointer(&p.m.mem[0]))
	lastEntryLine := (uintptr(unsafe.Pointer(p.entry(maxSegments-1))) - base) / 64
	for _, h := range []uint32{0, 1, 2, 3, 100, maxSegments - 1} {
		e := uintptr(unsafe.Pointer(p.entry(h))) - base
		c := uintptr(unsafe.Pointer(p.inflight(h))) - base
		if c/64 <= lastEntryLine || e/64 > lastEntryLine {
			t.Fatalf("handle %d: entry at %d and count at %d share the entries' lines", h, e, c)
		}
		if c+4 > uintptr(ctlPageSize) {
			t.Fatalf("handle %d: count at %d lies outside the %d-byte page", h, c, ctlPageSize)
		}
	}
	p.inflight(7).Add(1)
	if p.entry(7).state.Load() != 0 || p.entry(7).gen.Load() != 0 || p.inflight(6).Load() != 0 || p.inflight(8).Load() != 0 {
		t.Fatal("a count overlaps an entry or another count")
	}
}
