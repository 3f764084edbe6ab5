package loopback

import "unsafe"

// prefetchw asks for the cache line at p in a state this core can write,
// without waiting for it.
//
//go:noescape
func prefetchw(p unsafe.Pointer)
