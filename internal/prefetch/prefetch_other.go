//go:build !amd64

package prefetch

import "unsafe"

// Read is a hint that this architecture goes without.
func Read(unsafe.Pointer) {}

// Write is a hint that this architecture goes without.
func Write(unsafe.Pointer) {}
