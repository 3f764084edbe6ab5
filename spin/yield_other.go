//go:build !linux

package spin

import "runtime"

// yieldCore falls back to Go's scheduler where sched_yield is not at hand.
func yieldCore() { runtime.Gosched() }
