package prefetch

import "unsafe"

// Read asks for the cache line at p, to be read soon.
//
//go:noescape
func Read(p unsafe.Pointer)

// Write asks for the cache line at p in a state this core can write.
//
//go:noescape
func Write(p unsafe.Pointer)
