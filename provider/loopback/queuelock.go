package loopback

import (
	"runtime"
	"sync/atomic"

	"github.com/urma-go/sdk/provider/loopback/internal/shm"
	"github.com/urma-go/sdk/spin"
)

// queueLock is a send queue's lock. It is taken with a CAS, as a mutex is,
// but let go with a plain store (shm.StoreRelease) where sync.Mutex uses an
// atomic add. A locked instruction waits until every store before it owns
// its cache line, and the last stores of a post are the message's, to
// lines the receiver's core reads: a mutex's unlock would make every post
// wait for a round trip to that core before it could return. Taking the
// lock at the next post waits too, but only for what is still in flight
// by then.
//
// A lock-free queue's lock (provider.JFSConfig.LockFree, see lockFree)
// is not taken that way by its owner, the one goroutine at a time that
// posts to the queue and polls its JFC: LockOwner is a plain store and a
// plain load, with no locked instruction at all. Every other party (the
// provider's timers and helpers, Close, Query) takes it with Lock, which
// first raises revoke and then waits for the owner to be out. The two
// sides are a Dekker pair whose owner side has no fence: on amd64 its
// store may still sit in its core's store buffer when it loads revoke,
// and shm.AsymmetricFence, after the raise, makes every thread of the
// process run a full barrier (membarrier), so that either the owner's
// store is in sight of Lock or its load sees the raise. In a message-rate
// loop the owner's CAS would be the one locked instruction left, and it
// would wait for the last message's lines on every post
// (BenchmarkSendStream8LockFree against BenchmarkSendStream8PreparedRecv
// shows the difference).
//
// A waiter spins, then yields (spin.Wait): a queue is held for the length
// of a post, or of a delivery it helps with.
type queueLock struct {
	held uint64 // 1 while held by Lock, TryLock, or the owner's slow way
	// single is set for a lock-free queue before its first use.
	single bool
	// inside is 1 while the owner is in without held; revoke is 1 while
	// another party holds held (or is about to). ownerHeld says the
	// owner took held instead (revoke was up); only the owner reads it.
	inside, revoke uint64
	ownerHeld      bool
}

// lockFree makes l a lock-free queue's lock when this process can fence
// asymmetrically, and tells whether it did; before any use of l.
func (l *queueLock) lockFree() bool {
	l.single = shm.AsymmetricFenceReady()
	return l.single
}

// TryLock takes the lock if it is free (and, for a lock-free queue, its
// owner is out).
func (l *queueLock) TryLock() bool {
	if !l.tryHeld() {
		return false
	}
	if l.single && !l.evict(false) {
		l.Unlock()
		return false
	}
	return true
}

// Lock takes the lock, waiting for its holder (and, for a lock-free
// queue, for its owner).
func (l *queueLock) Lock() {
	l.lockHeld()
	if l.single {
		l.evict(true)
	}
}

// Unlock lets the lock go, taken by Lock or TryLock.
func (l *queueLock) Unlock() {
	if l.single {
		shm.StoreRelease(&l.revoke, 0)
	}
	shm.StoreRelease(&l.held, 0)
}

// LockOwner takes the lock for a lock-free queue's owner, and is Lock for
// any other queue. A post inlines TryLockOwner instead, and calls this
// only when that fails.
func (l *queueLock) LockOwner() {
	if l.single {
		if l.enter() {
			return
		}
	} else if l.tryHeld() {
		return
	}
	l.lockOwnerSlow()
}

func (l *queueLock) lockOwnerSlow() {
	l.lockHeld()
	l.ownerHeld = l.single
}

// TryLockOwner is TryLock for a lock-free queue's owner (see LockOwner).
func (l *queueLock) TryLockOwner() bool {
	if !l.single {
		return l.tryHeld()
	}
	if l.enter() {
		return true
	}
	if !l.tryHeld() {
		return false
	}
	l.ownerHeld = true
	return true
}

// UnlockOwner lets the lock go, taken by LockOwner or TryLockOwner.
func (l *queueLock) UnlockOwner() {
	if !l.single {
		shm.StoreRelease(&l.held, 0)
		return
	}
	if !l.ownerHeld {
		shm.StoreRelease(&l.inside, 0)
		return
	}
	l.ownerHeld = false
	l.Unlock()
}

// enter is the owner's way in: false, and out again, when another party
// holds the lock or is taking it.
func (l *queueLock) enter() bool {
	shm.StoreRelease(&l.inside, 1)
	if atomic.LoadUint64(&l.revoke) == 0 {
		return true
	}
	shm.StoreRelease(&l.inside, 0)
	return false
}

// evict, with held taken, keeps the owner out: it raises revoke, fences,
// and waits for the owner to leave (or, unless wait, reports that it has
// not; revoke is then still up, for Unlock to lower).
func (l *queueLock) evict(wait bool) bool {
	atomic.StoreUint64(&l.revoke, 1)
	shm.AsymmetricFence()
	var w spin.Wait
	for atomic.LoadUint64(&l.inside) != 0 {
		if !wait {
			return false
		}
		w.Idle()
		runtime.Gosched()
	}
	return true
}

func (l *queueLock) tryHeld() bool {
	return atomic.LoadUint64(&l.held) == 0 && atomic.CompareAndSwapUint64(&l.held, 0, 1)
}

func (l *queueLock) lockHeld() {
	if l.tryHeld() {
		return
	}
	var w spin.Wait
	for !l.tryHeld() {
		w.Idle()
		runtime.Gosched()
	}
}
