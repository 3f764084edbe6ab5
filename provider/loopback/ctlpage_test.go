package loopback

import (
	"testing"
	"unsafe"
)

// Each handle has its own entry and its own count, inside their pages.
func TestPagesHoldEveryHandle(t *testing.T) {
	p, err := newCtlPage()
	if err != nil {
		t.Fatal(err)
	}
	defer p.release()
	cp, err := newCountPage()
	if err != nil {
		t.Fatal(err)
	}
	defer cp.m.Close()
	for _, h := range []uint32{0, 1, 2, 3, 100, maxSegments - 1} {
		e := uintptr(unsafe.Pointer(p.entry(h))) - uintptr(unsafe.Pointer(&p.m.Bytes()[0]))
		c := uintptr(unsafe.Pointer(cp.count(h))) - uintptr(unsafe.Pointer(&cp.m.Bytes()[0]))
		if e+unsafe.Sizeof(segEntry{}) > uintptr(ctlPageSize) || c+4 > uintptr(countPageSize) {
			t.Fatalf("handle %d: entry at %d or count at %d lies outside its page", h, e, c)
		}
	}
	cp.count(7).Add(1)
	if p.entry(7).state.Load() != 0 || cp.count(6).Load() != 0 || cp.count(8).Load() != 0 {
		t.Fatal("a count overlaps another count or an entry")
	}
}
