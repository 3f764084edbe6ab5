package shm

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/spin"
)

// Ring is a bounded multi-producer multi-consumer queue of fixed-size slots
// in a shared mapping (Vyukov's design). Every slot starts with a sequence
// word; producers and consumers agree on a slot through it, so the ring holds
// no pointers and works between processes that map the same pages.
//
// Layout: [enqueue position | pad | dequeue position | pad | meta words][slots].
// The meta words hold the state of the queue that owns the ring (a JFR's
// state, a JFC's arm and event flags), so that a peer process that maps the
// ring sees them too.
type Ring struct {
	m *Mapping
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
	n        uint64 // slots in the mapping (see PhysSlots)
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

// MetaWords is the number of meta words a ring's owner may use: the
// header holds one more, the last, which records the ring's capacity
// (metaLimit).
const MetaWords = 31

// metaLimit is the meta word that records a ring's capacity, so that a peer
// that maps the ring enforces it too.
const metaLimit = MetaWords

const (
	ringHeader = 256
	ringMeta   = 128 // 32 meta words of 4 bytes up to ringHeader
)

// SlotSizeFor is the slot size of a ring whose slots carry payload bytes:
// the payload and its sequence word, rounded up to whole cache lines, so
// that a slot written by one side and read by the other shares its line
// with no other slot.
func SlotSizeFor(payload uintptr) uint64 { return (uint64(payload) + 8 + 63) &^ 63 }

// PhysSlots is the number of slots a ring of capacity n maps: a power of
// two, so that a position's slot is a mask and not a division (a 64-bit
// DIV is tens of cycles, and every ring operation needed two), and at
// least 2, as the algorithm needs.
func PhysSlots(n int) int {
	p := 2
	for p < n {
		p <<= 1
	}
	return p
}

func ringBytes(n int, slotSize uint64) uint64 { return ringHeader + uint64(PhysSlots(n))*slotSize }

// NewRing makes a ring of capacity n whose slots carry payload bytes each,
// in a new mapping named after name.
func NewRing(name string, n int, payload uintptr) (*Ring, error) {
	return NewRingOfSlots(name, n, SlotSizeFor(payload), 0)
}

// NewRingOfSlots makes a ring of n slots of slotSize bytes each, the
// sequence word included: a whole number of cache lines for queues whose
// slots are written by one side and read by the other, or a fraction of
// one for an inbox, where every slot moves the same way. The mapping has
// tail more bytes after the slots, for its owner's use.
func NewRingOfSlots(name string, n int, slotSize, tail uint64) (*Ring, error) {
	m, err := NewMapping(name, ringBytes(n, slotSize)+tail, false)
	if err != nil {
		return nil, err
	}
	r := wrapRing(m, n, slotSize)
	r.Meta(metaLimit).Store(uint32(n))
	for i := uint64(0); i < r.n; i++ {
		atomic.StoreUint64(r.Seq(i), i)
	}
	return r, nil
}

// AttachRing maps a ring that a peer process created and passed as fd,
// with tail bytes after its slots.
func AttachRing(fd int, n int, slotSize, tail uint64) (*Ring, error) {
	m, err := AttachMapping(fd, ringBytes(n, slotSize)+tail)
	if err != nil {
		return nil, err
	}
	return wrapRing(m, n, slotSize), nil
}

func wrapRing(m *Mapping, n int, slotSize uint64) *Ring {
	p := uint64(PhysSlots(n))
	return &Ring{m: m, base: unsafe.Pointer(&m.mem[ringHeader]), meta0: unsafe.Pointer(&m.mem[ringMeta]),
		n: p, mask: p - 1, limit: uint64(n), slotSize: slotSize,
		enq: (*uint64)(unsafe.Pointer(&m.mem[0])), deq: (*uint64)(unsafe.Pointer(&m.mem[64]))}
}

// Mapping returns the shared mapping that holds the ring, whose memfd a
// peer process maps to reach the ring too.
func (r *Ring) Mapping() *Mapping { return r.m }

// Cap returns the ring's capacity: the slots it was made with, which may
// be fewer than it maps.
func (r *Ring) Cap() int { return int(r.limit) }

// SlotSize returns the size of a slot, its sequence word included.
func (r *Ring) SlotSize() uint64 { return r.slotSize }

// EnqPos returns the address of the producers' position word, for an owner
// that moves it itself.
func (r *Ring) EnqPos() *uint64 { return r.enq }

// DeqPos returns the address of the consumers' position word, for an owner
// that claims slots itself (several with one CAS, or without writing their
// sequence words, as a JFC's consumers do). Such an owner tells the race
// detector with RaceAcquire.
func (r *Ring) DeqPos() *uint64 { return r.deq }

// Tail returns the address of the bytes the mapping holds after the slots
// (the tail of NewRingOfSlots).
func (r *Ring) Tail() unsafe.Pointer { return unsafe.Add(r.base, r.n*r.slotSize) }

// RaceAcquire tells the race detector of a consume the caller made itself
// through DeqPos; it does nothing in other builds (see racesync_race.go).
func (r *Ring) RaceAcquire() { raceAcquireRing(r) }

// Meta returns the i-th 32-bit meta word of the header, for the owner's
// use; i is below MetaWords.
func (r *Ring) Meta(i int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Add(r.meta0, 4*i))
}

// Seq returns the address of the sequence word of the slot of position
// pos. It holds pos+1 when the slot is published for its consumer; in a
// ring used with ReserveUpTo and Release, it holds pos when the slot is
// free for the producer of pos.
func (r *Ring) Seq(pos uint64) *uint64 {
	return (*uint64)(unsafe.Add(r.base, (pos&r.mask)*r.slotSize))
}

// Payload returns the address of the slot's payload, past its sequence word.
func (r *Ring) Payload(pos uint64) unsafe.Pointer {
	return unsafe.Add(r.base, (pos&r.mask)*r.slotSize+8)
}

// ReserveUpTo claims up to n consecutive free slots for writing with one
// CAS, and returns the first and how many it took (none when the ring is
// full). It reads the slots' sequence words before the claim: their lines
// are then asked for together, where a claim per slot would wait for each
// line before it could read the next (a locked instruction lets no load
// pass it).
func (r *Ring) ReserveUpTo(n int) (uint64, int) {
	for {
		pos := atomic.LoadUint64(r.enq)
		got, stale := 0, false
		for got < n {
			p := pos + uint64(got)
			d := int64(atomic.LoadUint64(r.Seq(p)) - p)
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

// releaseWait bounds how long AwaitRelease waits for a consumer to hand a
// slot back: a running sender holds one for nanoseconds, a preempted one
// for a scheduling slice; one that died holds it until the repair
// (the loopback provider's repairGrace), and the post then reports the ring full.
const releaseWait = 20 * time.Millisecond

// AwaitRelease is for a producer that found no free slot: it tells whether
// one is free now or soon. Consumers claim slots in order but may hand
// them back out of order (a sender that claimed a receive is still copying
// while the next one's sender has finished), so a ring whose count says it
// has room can find its next slot still held. AwaitRelease waits for that
// slot's release, up to releaseWait; it returns false at once when the
// ring is full by count (every slot published and not claimed).
func (r *Ring) AwaitRelease() bool {
	var deadline time.Time
	var wait spin.Wait // the claimer may be a process on this core
	for i := 0; ; i++ {
		pos := atomic.LoadUint64(r.enq)
		if pos-atomic.LoadUint64(r.deq) >= r.limit {
			return false
		}
		if int64(atomic.LoadUint64(r.Seq(pos))-pos) >= 0 {
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

// Publish makes a reserved slot visible to consumers: a release store, as
// for release. The CAS that reserved the slot is the fence the event
// protocol needs (see the loopback provider's jfcView.push).
func (r *Ring) Publish(pos uint64) {
	raceReleaseRing(r)
	StoreRelease(r.Seq(pos), pos+1)
}

// Claim takes the oldest published slot for reading; false when empty.
func (r *Ring) Claim() (uint64, bool) {
	for {
		pos := atomic.LoadUint64(r.deq)
		seq := atomic.LoadUint64(r.Seq(pos))
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

// Release returns a claimed slot to producers. It is a release store, not
// a full fence: the sender of a message releases the receive it consumed
// between writing the data and publishing the completion record, and a
// fence there would wait for the data's cache lines before asking for the
// record's (see StoreRelease).
func (r *Ring) Release(pos uint64) { StoreRelease(r.Seq(pos), pos+r.n) }

// A JFC's ring is used differently, so that a producer in another process
// touches no cache line a consumer writes on every record: consumers never
// write the slots (they copy a record out before they move deq past it),
// and producers learn that slots are free from deq, which they read only
// when their last reading of it says the ring is full. A record moves
// between cores as the one line of its slot, plus deq now and then.

// ReserveRecord claims the next slot of a JFC ring for writing; false when
// the ring is full.
func (r *Ring) ReserveRecord() (uint64, bool) {
	// The common case inline: room by the last reading of deq, and the
	// slot taken at the first try.
	pos := atomic.LoadUint64(r.enq)
	if pos-r.deqHint.Load() < r.limit && atomic.CompareAndSwapUint64(r.enq, pos, pos+1) {
		return pos, true
	}
	return r.ReserveRecords(1)
}

// ReserveRecords claims the next n slots of a JFC ring for writing, all or
// none, and returns the first; false when the ring has no room for n.
func (r *Ring) ReserveRecords(n uint64) (uint64, bool) {
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
func (r *Ring) claimEnq(pos, n uint64, checkRoom bool) (took, full bool) {
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
func (r *Ring) room(pos, n uint64) int {
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

// HeldReserved lists the slots of a JFC ring that a producer reserved and
// has not published, oldest first. A consumer cannot get past the first of
// them.
func (r *Ring) HeldReserved() []uint64 { return r.HeldReservedMarked(0) }

// HeldReservedMarked is HeldReserved for a ring whose producers may set the
// bits mark in a published sequence word (an inbox's further cells).
func (r *Ring) HeldReservedMarked(mark uint64) []uint64 {
	deq, enq := atomic.LoadUint64(r.deq), atomic.LoadUint64(r.enq)
	if enq < deq || enq-deq > r.n {
		return nil // a peer wrote nonsense: nothing to trust
	}
	var held []uint64
	for p := deq; p < enq; p++ {
		if atomic.LoadUint64(r.Seq(p))&^mark != p+1 {
			held = append(held, p)
		}
	}
	return held
}

// HeldClaimed lists the slots a consumer claimed and has not released. A
// producer cannot reuse them.
func (r *Ring) HeldClaimed() []uint64 {
	deq := atomic.LoadUint64(r.deq)
	var held []uint64
	for p := deq - min(deq, r.n); p < deq; p++ {
		if atomic.LoadUint64(r.Seq(p)) == p+1 {
			held = append(held, p)
		}
	}
	return held
}

// Len returns the number of reserved-but-not-claimed slots, exact when quiet.
func (r *Ring) Len() int {
	e, d := atomic.LoadUint64(r.enq), atomic.LoadUint64(r.deq)
	if e < d {
		return 0
	}
	return int(e - d)
}

// Close unmaps the ring.
func (r *Ring) Close() { r.m.Close() }
