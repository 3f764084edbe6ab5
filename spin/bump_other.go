//go:build !amd64 || race

package spin

import "sync/atomic"

// bump adds one to the tick count atomically (see bump_amd64.go).
func bump(n *uint32) uint32 { return atomic.AddUint32(n, 1) }
