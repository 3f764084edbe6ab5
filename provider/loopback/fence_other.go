//go:build !amd64 || race

package loopback

// asymmetricFence does nothing where storeRelease is Go's atomic.Store:
// the owner's store and load of a lock-free queue's lock are then
// sequentially consistent by themselves (see queueLock).
func asymmetricFence() {}

// asymmetricFenceReady tells whether lock-free queues can be had: always,
// here (see asymmetricFence).
func asymmetricFenceReady() bool { return true }
