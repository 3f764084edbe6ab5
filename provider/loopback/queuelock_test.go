package loopback

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// TestQueueLockFreeExclusion runs a lock-free queue's owner (LockOwner and
// TryLockOwner, with no locked instruction) against two other parties
// (Lock and TryLock). Each party inside writes its name and reads it back
// a while: another name read, or a lost increment of the count that only
// the lock guards, is two parties inside at once. On amd64 outside the
// race detector this is the membarrier path; with it, the sequentially
// consistent one.
func TestQueueLockFreeExclusion(t *testing.T) {
	var l queueLock
	if !l.lockFree() {
		t.Skip("this kernel has no membarrier(2) private expedited command: lock-free queues are locked as others here")
	}
	const ownerRounds, helperRounds = 200000, 2000
	var count, occupant uint64
	var overlaps atomic.Uint64
	inside := func(name uint64) {
		shm.StoreRelease(&occupant, name) // a plain store, as the owner's own
		for range 16 {
			if atomic.LoadUint64(&occupant) != name {
				overlaps.Add(1)
			}
		}
		count++
	}
	var tries [3]int // taken by TryLockOwner, by each helper's TryLock
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range ownerRounds {
			if i%3 == 0 {
				if !l.TryLockOwner() {
					l.LockOwner()
				} else {
					tries[0]++
				}
			} else {
				l.LockOwner()
			}
			inside(1)
			l.UnlockOwner()
		}
	})
	for h := range 2 {
		wg.Go(func() {
			for i := range helperRounds {
				if i%2 == 0 && l.TryLock() {
					tries[1+h]++
				} else {
					l.Lock()
				}
				inside(uint64(2 + h))
				l.Unlock()
			}
		})
	}
	wg.Wait()
	if n := overlaps.Load(); n > 0 {
		t.Fatalf("%d reads inside the lock saw another party's name", n)
	}
	if want := uint64(ownerRounds + 2*helperRounds); count != want {
		t.Fatalf("count %d, want %d: two parties were inside at once", count, want)
	}
	if l.held != 0 || l.inside != 0 || l.revoke != 0 || l.ownerHeld {
		t.Fatalf("left held=%d inside=%d revoke=%d ownerHeld=%v", l.held, l.inside, l.revoke, l.ownerHeld)
	}
	t.Logf("tries taken: owner %d, helpers %d and %d", tries[0], tries[1], tries[2])
}

// TestQueueLockFreeOwnerWaitsForHelper holds the lock as another party:
// the owner's LockOwner waits for Unlock, and its TryLockOwner fails
// meanwhile; a helper's Lock waits for an owner inside.
func TestQueueLockFreeOwnerWaitsForHelper(t *testing.T) {
	var l queueLock
	if !l.lockFree() {
		t.Skip("this kernel has no membarrier(2) private expedited command")
	}
	l.Lock()
	if l.TryLockOwner() {
		t.Fatal("the owner got in while another party held the lock")
	}
	waitsFor(t, "LockOwner", l.LockOwner, l.UnlockOwner, l.Unlock)

	l.LockOwner()
	if l.TryLock() {
		t.Fatal("TryLock got in while the owner was inside")
	}
	waitsFor(t, "Lock", l.Lock, l.Unlock, l.UnlockOwner)
}

// waitsFor checks that take, in another goroutine, does not return while
// the lock is held by this one, and does once release lets it go (then
// the other goroutine lets go with drop).
func waitsFor(t *testing.T, name string, take, drop, release func()) {
	t.Helper()
	in := make(chan struct{})
	go func() {
		take()
		close(in)
		drop()
	}()
	time.Sleep(20 * time.Millisecond) // time for a wrong take to return
	select {
	case <-in:
		t.Fatalf("%s returned while the lock was held", name)
	default:
	}
	release()
	<-in
}
