// Package memflag reads a byte that another process, or a device, writes
// behind Go's back: the flag of a protocol that signals with memory.
package memflag

import (
	"sync/atomic"
	"unsafe"
)

// Flag is one byte of memory, read with an atomic load of the aligned
// word that holds it, so that the compiler keeps the load inside a
// polling loop. The word lies within the byte's allocation: Go and mmap
// both align allocations to at least 8 bytes.
type Flag struct {
	word  *uint32
	shift uint
}

// At returns the flag at b.
func At(b *byte) Flag {
	addr := uintptr(unsafe.Pointer(b))
	off := addr & 3
	// unsafe.Add keeps the word derived from b, a Go pointer the
	// collector and checkptr can follow.
	return Flag{word: (*uint32)(unsafe.Add(unsafe.Pointer(b), -int(off))), shift: uint(off) * 8}
}

// Load returns the byte's value now.
func (f Flag) Load() byte { return byte(atomic.LoadUint32(f.word) >> f.shift) }
