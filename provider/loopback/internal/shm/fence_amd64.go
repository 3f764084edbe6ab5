//go:build amd64 && !race

package shm

import (
	"sync"

	"golang.org/x/sys/unix"
)

// membarrier(2) commands (linux/membarrier.h), which x/sys/unix does not
// name.
const (
	membarrierPrivateExpedited         = 1 << 3
	membarrierRegisterPrivateExpedited = 1 << 4
)

// AsymmetricFence makes every thread of this process that is running run
// a full memory barrier before it returns (membarrier, private
// expedited: an interrupt to each core that runs one, a few microseconds
// in all). A lock-free queue's owner stores with plain MOVs
// (StoreRelease), which amd64 may let a later load pass; this is the
// fence its side of the Dekker pair does without (see the loopback provider's queueLock).
func AsymmetricFence() {
	_, _, _ = unix.Syscall(unix.SYS_MEMBARRIER, membarrierPrivateExpedited, 0, 0)
}

// AsymmetricFenceReady registers the process for AsymmetricFence, once,
// and tells whether it can use it (a kernel before 4.14, or a sandbox
// without membarrier, cannot: lock-free queues are then locked as others).
var AsymmetricFenceReady = sync.OnceValue(func() bool {
	_, _, errno := unix.Syscall(unix.SYS_MEMBARRIER, membarrierRegisterPrivateExpedited, 0, 0)
	return errno == 0
})
