package loopback

import (
	"runtime"
	"sync/atomic"

	"github.com/urma-go/sdk/spin"
)

// queueLock is a send queue's lock. It is taken with a CAS, as a mutex is,
// but let go with a plain store (storeRelease) where sync.Mutex uses an
// atomic add. A locked instruction waits until every store before it owns
// its cache line, and the last stores of a post are the message's, to
// lines the receiver's core reads: a mutex's unlock made every post wait
// for a round trip to that core before it could return. Taking the lock
// at the next post waits too, but only for what is still in flight by
// then.
//
// A waiter spins, then yields (spin.Wait): a queue is held for the length
// of a post, or of a delivery it helps with.
type queueLock struct {
	held uint64 // 1 while held
}

// TryLock takes the lock if it is free.
func (l *queueLock) TryLock() bool {
	return atomic.LoadUint64(&l.held) == 0 && atomic.CompareAndSwapUint64(&l.held, 0, 1)
}

// Lock takes the lock, waiting for its holder.
func (l *queueLock) Lock() {
	if l.TryLock() {
		return
	}
	var w spin.Wait
	for !l.TryLock() {
		w.Idle()
		runtime.Gosched()
	}
}

// Unlock lets the lock go.
func (l *queueLock) Unlock() { storeRelease(&l.held, 0) }
