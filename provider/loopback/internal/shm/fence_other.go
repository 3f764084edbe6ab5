//go:build !amd64 || race

package shm

// AsymmetricFence does nothing where StoreRelease is Go's atomic.Store:
// the owner's store and load of a lock-free queue's lock are then
// sequentially consistent by themselves (see the loopback provider's queueLock).
func AsymmetricFence() {}

// AsymmetricFenceReady tells whether lock-free queues can be had: always,
// here (see AsymmetricFence).
func AsymmetricFenceReady() bool { return true }
