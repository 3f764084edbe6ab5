//go:build !amd64

package loopback

import "unsafe"

// prefetchw is a hint that this architecture goes without.
func prefetchw(unsafe.Pointer) {}
