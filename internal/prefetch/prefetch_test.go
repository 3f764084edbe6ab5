package prefetch

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The hints are asked for with stale and wrong pointers on purpose (a
// table that grew, a ring slot read before it is claimed): they must never
// fault, as a load would, on nil or on memory that is no longer mapped.
func TestHintsNeverFault(t *testing.T) {
	b, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	p := unsafe.Pointer(&b[0])
	Read(p)
	Write(p)
	if err := unix.Munmap(b); err != nil {
		t.Fatal(err)
	}
	for _, q := range []unsafe.Pointer{nil, p, unsafe.Add(p, 1<<20)} {
		Read(q)
		Write(q)
	}
}
