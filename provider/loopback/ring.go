package loopback

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/spin"
)

// ring is a bounded multi-producer multi-consumer queue of fixed-size slots
// in a shared mapping (Vyukov's design). Every slot starts with a sequence
// word; producers and consumers agree on a slot through it, so the ring holds
// no pointers and works between processes that map the same pages.
//
// Layout: [enqueue position | pad | dequeue position | pad | meta words][slots].
// The meta words hold the state of the queue that owns the ring (a JFR's
// state, a JFC's arm and event flags), so that a peer process that maps the
// ring sees them too.
type ring struct {
	m *mapping
	// base is the first slot's address. A slot's address is worked out
	// from it without the bounds check of an index into the mapping,
	// which cannot fail (a position's slot is masked, and the mapping
	// holds every slot): the sequence word and the payload are found
	// several times per message on every path, where the check and its
	// loads of the slice would add to every SEND's instructions
	// (bench/instructions counts them).
	base unsafe.Pointer
	// meta0 is the first meta word's address, for the same reason: the
	// arm state and a receive queue's state are read on every post.
	meta0    unsafe.Pointer
	n        uint64 // slots in the mapping (see physSlots)
	mask     uint64 // n-1
	limit    uint64 // capacity asked for, at most n
	slotSize uint64
	enq      *uint64
	deq      *uint64
	// deqHint is this process's last reading of deq, which producers
	// check the capacity against; deq itself is written by consumers,
	// perhaps in another process, and reading it costs a cache line.
	deqHint atomic.Uint64
}

// metaLimit is the meta word that records a ring's capacity, so that a peer
// that maps the ring enforces it too.
const metaLimit = 31

const (
	ringHeader = 256
	ringMeta   = 128 // 32 meta words of 4 bytes up to ringHeader
)

func slotSizeFor(payload uintptr) uint64 { return (uint64(payload) + 8 + 63) &^ 63 }

// physSlots is the number of slots a ring of capacity n maps: a power of
// two, so that a position's slot is a mask and not a division (a 64-bit
// DIV is tens of cycles, and every ring operation needed two), and at
// least 2, as the algorithm needs.
func physSlots(n int) int {
	p := 2
	for p < n {
		p <<= 1
	}
	return p
}

func ringBytes(n int, slotSize uint64) uint64 { return ringHeader + uint64(physSlots(n))*slotSize }

func newRing(name string, n int, payload uintptr) (*ring, error) {
	return newRingOfSlots(name, n, slotSizeFor(payload), 0)
}

// newRingOfSlots makes a ring of n slots of slotSize bytes each, the
// sequence word included: a whole number of cache lines for queues whose
// slots are written by one side and read by the other, or a fraction of
// one for an inbox, where every slot moves the same way. The mapping has
// tail more bytes after the slots, for its owner's use.
func newRingOfSlots(name string, n int, slotSize, tail uint64) (*ring, error) {
	m, err := newMapping(name, ringBytes(n, slotSize)+tail, false)
	if err != nil {
		return nil, err
	}
	r := wrapRing(m, n, slotSize)
	r.meta(metaLimit).Store(uint32(n))
	for i := uint64(0); i < r.n; i++ {
		atomic.StoreUint64(r.seq(i), i)
	}
	return r, nil
}

// attachRing maps a ring that a peer process created and passed as fd,
// with tail bytes after its slots.
func attachRing(fd int, n int, slotSize, tail uint64) (*ring, error) {
	m, err := attachMapping(fd, ringBytes(n, slotSize)+tail)
	if err != nil {
		return nil, err
	}
	return wrapRing(m, n, slotSize), nil
}

func wrapRing(m *mapping, n int, slotSize uint64) *ring {
	p := uint64(physSlots(n))
	return &ring{m: m, base: unsafe.Pointer(&m.mem[ringHeader]), meta0: unsafe.Pointer(&m.mem[ringMeta]),
		n: p, mask: p - 1, limit: uint64(n), slotSize: slotSize,
		enq: (*uint64)(unsafe.Pointer(&m.mem[0])), deq: (*uint64)(unsafe.Pointer(&m.mem[64]))}
}

// meta returns the i-th 32-bit meta word of the header; i is one of the
// meta constants, below 32.
func (r *ring) meta(i int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Add(r.meta0, 4*i))
}

func (r *ring) seq(pos uint64) *uint64 {
	return (*uint64)(unsafe.Add(r.base, (pos&r.mask)*r.slotSize))
}

// payload returns the address of the slot's payload, past its sequence word.
func (r *ring) payload(pos uint64) unsafe.Pointer {
	return unsafe.Add(r.base, (pos&r.mask)*r.slotSize+8)
}

// reserveUpTo claims up to n consecutive free slots for writing with one
// CAS, and returns the first and how many it took (none when the ring is
// full). It reads the slots' sequence words before the claim: their lines
// are then asked for together, where a claim per slot would wait for each
// line before it could read the next (a locked instruction lets no load
// pass it).
func (r *ring) reserveUpTo(n int) (uint64, int) {
	for {
		pos := atomic.LoadUint64(r.enq)
		got, stale := 0, false
		for got < n {
			p := pos + uint64(got)
			d := int64(atomic.LoadUint64(r.seq(p)) - p)
			if d == 0 {
				got++
				continue
			}
			stale = d > 0 // another producer took p: pos is old
			break
		}
		if got == 0 {
			if stale {
				continue
			}
			return 0, 0
		}
		took, full := r.claimEnq(pos, uint64(got), r.limit < r.n)
		if took {
			return pos, got
		}
		if full {
			// Free slots past the capacity (the ring maps a power
			// of two): ask for what the capacity leaves.
			d := atomic.LoadUint64(r.deq)
			if int64(pos-d) < 0 {
				continue
			}
			used := pos - d
			if used >= r.limit || got == 1 {
				return 0, 0
			}
			n = int(min(r.limit-used, uint64(got-1)))
		}
	}
}

// releaseWait bounds how long awaitRelease waits for a consumer to hand a
// slot back: a running sender holds one for nanoseconds, a preempted one
// for a scheduling slice; one that died holds it until the repair
// (repairGrace), and the post then reports the ring full.
const releaseWait = 20 * time.Millisecond

// awaitRelease is for a producer that found no free slot: it tells whether
// one is free now or soon. Consumers claim slots in order but may hand
// them back out of order (a sender that claimed a receive is still copying
// while the next one's sender has finished), so a ring whose count says it
// has room can find its next slot still held. awaitRelease waits for that
// slot's release, up to releaseWait; it returns false at once when the
// ring is full by count (every slot published and not claimed).
func (r *ring) awaitRelease() bool {
	var deadline time.Time
	var wait spin.Wait // the claimer may be a process on this core
	for i := 0; ; i++ {
		pos := atomic.LoadUint64(r.enq)
		if pos-atomic.LoadUint64(r.deq) >= r.limit {
			return false
		}
		if int64(atomic.LoadUint64(r.seq(pos))-pos) >= 0 {
			return true // released, or taken by another producer: try again
		}
		if i%64 == 63 {
			switch now := time.Now(); {
			case deadline.IsZero():
				deadline = now.Add(releaseWait)
			case now.After(deadline):
				return false
			}
		}
		wait.Idle()
		runtime.Gosched()
	}
}

// publish makes a reserved slot visible to consumers: a release store, as
// for release. The CAS that reserved the slot is the fence the event
// protocol needs (see jfcView.push).
func (r *ring) publish(pos uint64) {
	raceReleaseRing(r)
	storeRelease(r.seq(pos), pos+1)
}

// claim takes the oldest published slot for reading; false when empty.
func (r *ring) claim() (uint64, bool) {
	for {
		pos := atomic.LoadUint64(r.deq)
		seq := atomic.LoadUint64(r.seq(pos))
		switch d := int64(seq - (pos + 1)); {
		case d == 0:
			if atomic.CompareAndSwapUint64(r.deq, pos, pos+1) {
				raceAcquireRing(r)
				return pos, true
			}
		case d < 0:
			return 0, false
		}
	}
}

// release returns a claimed slot to producers. It is a release store, not
// a full fence: the sender of a message releases the receive it consumed
// between writing the data and publishing the completion record, and a
// fence there would wait for the data's cache lines before asking for the
// record's (see storeRelease).
func (r *ring) release(pos uint64) { storeRelease(r.seq(pos), pos+r.n) }

// A JFC's ring is used differently, so that a producer in another process
// touches no cache line a consumer writes on every record: consumers never
// write the slots (they copy a record out before they move deq past it),
// and producers learn that slots are free from deq, which they read only
// when their last reading of it says the ring is full. A record moves
// between cores as the one line of its slot, plus deq now and then.

// reserveRecord claims the next slot of a JFC ring for writing; false when
// the ring is full.
func (r *ring) reserveRecord() (uint64, bool) {
	// The common case inline: room by the last reading of deq, and the
	// slot taken at the first try.
	pos := atomic.LoadUint64(r.enq)
	if pos-r.deqHint.Load() < r.limit && atomic.CompareAndSwapUint64(r.enq, pos, pos+1) {
		return pos, true
	}
	return r.reserveRecords(1)
}

// reserveRecords claims the next n slots of a JFC ring for writing, all or
// none, and returns the first; false when the ring has no room for n.
func (r *ring) reserveRecords(n uint64) (uint64, bool) {
	for {
		pos := atomic.LoadUint64(r.enq)
		took, full := r.claimEnq(pos, n, true)
		if took {
			return pos, true
		}
		if full {
			return 0, false
		}
	}
}

// claimEnq moves enq from the producer position pos past n slots for this
// producer: took when it did, full when the ring has no room for them
// (checked only with checkRoom), neither when another producer got there
// first or pos was stale.
func (r *ring) claimEnq(pos, n uint64, checkRoom bool) (took, full bool) {
	if checkRoom {
		switch r.room(pos, n) {
		case roomNone:
			return false, true
		case roomStale:
			return false, false
		}
	}
	return atomic.CompareAndSwapUint64(r.enq, pos, pos+n), false
}

// What room says of a position.
const (
	roomYes   = iota // within the capacity
	roomNone         // the ring is full (or a faulty peer wrote its header)
	roomStale        // pos was read before consumers moved past it: read again
)

// room tells whether the n slots from the producer position pos are within
// the ring's capacity, reading deq only when the last reading of it says no.
func (r *ring) room(pos, n uint64) int {
	if used := pos - r.deqHint.Load(); used < r.limit && used+n <= r.limit {
		return roomYes
	}
	d := atomic.LoadUint64(r.deq)
	if int64(pos-d) < 0 {
		// A ring whose enq stays behind deq was written by a faulty peer.
		if atomic.LoadUint64(r.enq) == pos {
			return roomNone
		}
		return roomStale
	}
	r.deqHint.Store(d)
	if used := pos - d; used >= r.limit || used+n > r.limit {
		return roomNone
	}
	return roomYes
}

// heldReserved lists the slots of a JFC ring that a producer reserved and
// has not published, oldest first. A consumer cannot get past the first of
// them.
func (r *ring) heldReserved() []uint64 { return r.heldReservedMarked(0) }

// heldReservedMarked is heldReserved for a ring whose producers may set the
// bits mark in a published sequence word (an inbox's further cells).
func (r *ring) heldReservedMarked(mark uint64) []uint64 {
	deq, enq := atomic.LoadUint64(r.deq), atomic.LoadUint64(r.enq)
	if enq < deq || enq-deq > r.n {
		return nil // a peer wrote nonsense: nothing to trust
	}
	var held []uint64
	for p := deq; p < enq; p++ {
		if atomic.LoadUint64(r.seq(p))&^mark != p+1 {
			held = append(held, p)
		}
	}
	return held
}

// heldClaimed lists the slots a consumer claimed and has not released. A
// producer cannot reuse them.
func (r *ring) heldClaimed() []uint64 {
	deq := atomic.LoadUint64(r.deq)
	var held []uint64
	for p := deq - min(deq, r.n); p < deq; p++ {
		if atomic.LoadUint64(r.seq(p)) == p+1 {
			held = append(held, p)
		}
	}
	return held
}

// count is the number of reserved-but-not-claimed slots, exact when quiet.
func (r *ring) count() int {
	e, d := atomic.LoadUint64(r.enq), atomic.LoadUint64(r.deq)
	if e < d {
		return 0
	}
	return int(e - d)
}

func (r *ring) close() { r.m.close() }
