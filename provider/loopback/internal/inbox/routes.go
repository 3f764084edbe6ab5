package inbox

import (
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/spin"
)

// Routes is how many sending queues one inbox serves at once: the entries
// of its route table. A queue that finds none free sends the usual way.
const Routes = 64

// HoleRoute is the route of an entry the repair wrote in place of one
// whose producer died before publishing it; it is skipped.
const HoleRoute = 0xffff

// Meta words of an inbox's ring, on two lines: the receiver writes both
// all the time, and senders read the second now and then.
const (
	metaHeld   = 0  // the consumer lock: 0, or the pid of its holder
	metaActive = 16 // counts the receiver's polls and posts of receives
)

// A Sender is the words of a receive record that name the sender: its
// EID and its UASID and queue id (UASID | id << 32).
type Sender struct {
	EID [2]uint64
	IDs uint64
}

// A Route is a sending queue's entry in an inbox's route table, in the
// shared mapping: it names the sender in the receive records, and tells
// the sender how delivery went. One line each: senders read their own,
// deliverers every route. Its words but Sender are read and written
// atomically.
type Route struct {
	// Owner is 0 for a free route, else the owner's pid << 32 | its
	// queue's id.
	Owner uint64
	// FailAt is one past the position of the route's message whose
	// delivery failed, and FailSt its status for the sender; the
	// route's later messages are not delivered. 0: none failed.
	FailAt uint64
	FailSt uint64
	// SkipBelow is where the route's messages start to count: those
	// before it were taken back by their sender.
	SkipBelow uint64
	// Sender names the owner in its messages' receive records. Set
	// before the route's first message, which a deliverer reads after
	// it: stores are seen in order.
	Sender Sender
	_      uint64
}

// Failed is the route's FailAt: 0, or one past the position of its
// message whose delivery failed.
func (rt *Route) Failed() uint64 { return atomic.LoadUint64(&rt.FailAt) }

// Skips tells whether the route's message at pos is not to be delivered:
// taken back by its sender, or after a failure.
func (rt *Route) Skips(pos uint64) bool {
	return pos < atomic.LoadUint64(&rt.SkipBelow) || atomic.LoadUint64(&rt.FailAt) != 0
}

// Fail records that the route's message at pos failed with st. Stored
// before deq moves past the message: a sender that sees it delivered
// sees this.
func (rt *Route) Fail(pos uint64, st provider.CRStatus) {
	atomic.StoreUint64(&rt.FailSt, uint64(st))
	atomic.StoreUint64(&rt.FailAt, pos+1)
}

// Reset makes the route count from the enq of b, its inbox: messages
// before it (a former owner's, or its owner's taken back) are skipped,
// and no failure is recorded. Under the consumer lock, or before the
// route is used.
func (rt *Route) Reset(b *Inbox) {
	atomic.StoreUint64(&rt.SkipBelow, atomic.LoadUint64(b.r.EnqPos()))
	atomic.StoreUint64(&rt.FailAt, 0)
}

// Held is the consumer lock's word: 0, or the pid of its holder.
func (b *Inbox) Held() *atomic.Uint32 { return b.r.Meta(metaHeld) }

// Bump counts a sign of the receiver's life. One writer in the common
// case, so no locked instruction: a lost count among racing pollers
// changes nothing a sender concludes.
func (b *Inbox) Bump() {
	a := b.r.Meta(metaActive)
	a.Store(a.Load() + 1)
}

// Active is the count of the receiver's signs of life (Bump): a sender
// that sees it stand still while its messages wait delivers them itself.
func (b *Inbox) Active() uint32 { return b.r.Meta(metaActive).Load() }

// TryLock takes the consumer lock for the process self (its pid) if it is
// free.
func (b *Inbox) TryLock(self uint32) bool {
	h := b.Held()
	return h.Load() == 0 && h.CompareAndSwap(0, self)
}

// Lock takes the consumer lock for the process self, waiting for its
// holder, who delivers a bounded number of messages; false if gone() says
// to stop waiting (a peer's inbox whose process died). A holder whose
// process died (a sender killed while it helped) never lets go: the lock
// is taken from it.
func (b *Inbox) Lock(self uint32, gone func() bool) bool {
	var w spin.Wait
	for i := 1; !b.TryLock(self); i++ {
		if gone != nil && gone() {
			return false
		}
		if i%256 == 0 {
			if h, dead := b.DeadHolder(self); dead && b.Held().CompareAndSwap(h, self) {
				return true
			}
		}
		w.Idle()
		runtime.Gosched()
	}
	return true
}

// Unlock lets go of the consumer lock.
func (b *Inbox) Unlock() { b.Held().Store(0) }

// DeadHolder returns the consumer lock's holder, and whether it is
// another process than self that died (a sender killed while it helped):
// it never lets go.
func (b *Inbox) DeadHolder(self uint32) (uint32, bool) {
	h := b.Held().Load()
	return h, h != 0 && h != self && !Alive(int(h))
}

// Waiting tells whether a message is published at the head of the inbox.
// It reads the head cell's sequence word, not enq: every post writes enq,
// and a receiver that read it on every poll would take its line from the
// sender each time.
func (b *Inbox) Waiting() bool {
	r := b.r
	pos := atomic.LoadUint64(r.DeqPos())
	return atomic.LoadUint64(r.Seq(pos))&^Cont == pos+1
}

// Alive reports whether process pid exists: a consumer lock's holder or a
// route's owner whose process does not is gone, and what it held is taken
// from it.
func Alive(pid int) bool { return unix.Kill(pid, 0) != unix.ESRCH }
