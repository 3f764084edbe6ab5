package shm

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urma-go/sdk/provider/loopback/internal/shm/shmtest"
)

// ringProto is one of the two ways the rings are used: receive rings
// (ReserveUpTo, Publish, Claim, Release) and JFC rings (ReserveRecord,
// Publish, and a consumer that moves DeqPos itself, as popRecord). The
// tests run on both.
type ringProto struct {
	name string
	push func(r *Ring, v uint64) bool
	pop  func(r *Ring) (uint64, bool)
}

// record is the payload the record tests write: a value and its
// complement.
type record struct{ v, check uint64 }

// popRecord consumes the oldest record of a JFC ring as its pollers do:
// it reads the slot in place and moves the dequeue position past it,
// without writing the slot's sequence word.
func popRecord(r *Ring) (uint64, bool) {
	for {
		pos := atomic.LoadUint64(r.DeqPos())
		if atomic.LoadUint64(r.Seq(pos)) != pos+1 {
			if atomic.LoadUint64(r.DeqPos()) != pos {
				continue // another consumer took it meanwhile
			}
			return 0, false
		}
		s := (*record)(r.Payload(pos))
		v, check := atomic.LoadUint64(&s.v), atomic.LoadUint64(&s.check)
		if atomic.CompareAndSwapUint64(r.DeqPos(), pos, pos+1) {
			r.RaceAcquire()
			if check != ^v {
				panic("torn record")
			}
			return v, true
		}
	}
}

func forEachProto(t *testing.T, f func(t *testing.T, p ringProto)) {
	recv := ringProto{name: "receive",
		push: func(r *Ring, v uint64) bool {
			pos, got := r.ReserveUpTo(1)
			if got == 0 {
				return false
			}
			atomic.StoreUint64((*uint64)(r.Payload(pos)), v)
			r.Publish(pos)
			return true
		},
		pop: func(r *Ring) (uint64, bool) {
			pos, ok := r.Claim()
			if !ok {
				return 0, false
			}
			v := atomic.LoadUint64((*uint64)(r.Payload(pos)))
			r.Release(pos)
			return v, true
		}}
	record := ringProto{name: "record",
		push: func(r *Ring, v uint64) bool {
			pos, ok := r.ReserveRecord()
			if !ok {
				return false
			}
			// Two words that must agree, so that a torn copy of a
			// slot a producer was rewriting shows. The test rings'
			// slots (8-byte payload asked) have room for both.
			s := (*record)(r.Payload(pos))
			atomic.StoreUint64(&s.v, v)
			atomic.StoreUint64(&s.check, ^v)
			r.Publish(pos)
			return true
		},
		pop: func(r *Ring) (uint64, bool) {
			return popRecord(r)
		}}
	for _, p := range []ringProto{recv, record} {
		t.Run(p.name, func(t *testing.T) { f(t, p) })
	}
}

func TestRingFullEmpty(t *testing.T) {
	forEachProto(t, func(t *testing.T, p ringProto) {
		r, err := NewRing("test", 4, 8)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, ok := p.pop(r); ok {
			t.Fatal("pop on a new ring succeeded")
		}
		for i := uint64(0); i < 4; i++ {
			if !p.push(r, i) {
				t.Fatalf("push %d failed on a ring with room", i)
			}
		}
		if p.push(r, 99) {
			t.Fatal("push on a full ring succeeded")
		}
		if r.Len() != 4 {
			t.Fatalf("count = %d, want 4", r.Len())
		}
		for i := uint64(0); i < 4; i++ {
			if v, ok := p.pop(r); !ok || v != i {
				t.Fatalf("pop = %d,%v, want %d,true", v, ok, i)
			}
		}
		if _, ok := p.pop(r); ok {
			t.Fatal("pop on a drained ring succeeded")
		}
	})
}

// Wraparound matters because slot positions are reused modulo n and only the
// sequence word tells a stale slot from a fresh one.
func TestRingWraparound(t *testing.T) {
	forEachProto(t, func(t *testing.T, p ringProto) {
		r, err := NewRing("test", 3, 8)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		next, want := uint64(0), uint64(0)
		for round := 0; round < 1000; round++ {
			k := round%3 + 1
			for i := 0; i < k; i++ {
				if !p.push(r, next) {
					t.Fatalf("round %d: push failed", round)
				}
				next++
			}
			for i := 0; i < k; i++ {
				v, ok := p.pop(r)
				if !ok || v != want {
					t.Fatalf("round %d: pop = %d,%v, want %d", round, v, ok, want)
				}
				want++
			}
			if r.Len() != 0 {
				t.Fatalf("round %d: count = %d after draining", round, r.Len())
			}
		}
	})
}

func TestRingMPMC(t *testing.T) {
	forEachProto(t, func(t *testing.T, p ringProto) {
		const producers, consumers, per = 4, 4, 5000
		r, err := NewRing("test", 64, 8)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var seen [producers * per]atomic.Int32
		var got atomic.Int64
		var wg sync.WaitGroup
		for prod := 0; prod < producers; prod++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < per; i++ {
					for !p.push(r, uint64(prod*per+i)) {
						runtime.Gosched()
					}
				}
			}()
		}
		for c := 0; c < consumers; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for got.Load() < producers*per {
					if v, ok := p.pop(r); ok {
						seen[v].Add(1)
						got.Add(1)
					} else {
						runtime.Gosched()
					}
				}
			}()
		}
		wg.Wait()
		for i := range seen {
			if n := seen[i].Load(); n != 1 {
				t.Fatalf("value %d seen %d times", i, n)
			}
		}
	})
}

// With one consumer, each producer's items come out in the order it put
// them in, however the producers interleave.
func TestRingOrderPerProducer(t *testing.T) {
	forEachProto(t, func(t *testing.T, p ringProto) {
		const producers, per = 3, 20000
		r, err := NewRing("test", 8, 16)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var wg sync.WaitGroup
		for prod := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range per {
					for !p.push(r, uint64(prod*per+i)) {
						runtime.Gosched()
					}
				}
			}()
		}
		next := make([]int, producers)
		for got := 0; got < producers*per; {
			v, ok := p.pop(r)
			if !ok {
				runtime.Gosched()
				continue
			}
			prod, i := int(v)/per, int(v)%per
			if i != next[prod] {
				t.Fatalf("producer %d: item %d came out when %d was due", prod, i, next[prod])
			}
			next[prod]++
			got++
		}
		wg.Wait()
	})
}

// A ring of one slot holds one item: the algorithm needs two slots, so the
// ring maps two and enforces the capacity itself.
func TestRingOfOne(t *testing.T) {
	forEachProto(t, func(t *testing.T, p ringProto) {
		r, err := NewRing("test", 1, 8)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for round := range 3 {
			if !p.push(r, uint64(round)) {
				t.Fatalf("round %d: push into an empty ring failed", round)
			}
			if p.push(r, 99) {
				t.Fatalf("round %d: a 1-slot ring took a second item", round)
			}
			if v, ok := p.pop(r); !ok || v != uint64(round) {
				t.Fatalf("round %d: pop = %d, %v", round, v, ok)
			}
		}
	})
}

// ReserveUpTo takes as many slots as the capacity allows, and no more, even
// where the ring maps more slots than its capacity.
func TestRingReserveUpToCapacity(t *testing.T) {
	r, err := NewRing("test", 5, 8) // maps 8 slots
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pos, got := r.ReserveUpTo(8)
	if pos != 0 || got != 5 {
		t.Fatalf("ReserveUpTo(8) on an empty ring of 5 took %d at %d", got, pos)
	}
	for k := range got {
		r.Publish(pos + uint64(k))
	}
	if _, got := r.ReserveUpTo(1); got != 0 {
		t.Fatalf("ReserveUpTo on a full ring took %d", got)
	}
	for range 2 {
		p, ok := r.Claim()
		if !ok {
			t.Fatal("claim on a full ring failed")
		}
		r.Release(p)
	}
	if pos, got := r.ReserveUpTo(8); pos != 5 || got != 2 {
		t.Fatalf("after two claims ReserveUpTo(8) took %d at %d, want 2 at 5", got, pos)
	}
}

// Producers that reserve in chunks of different sizes and a consumer that
// claims one at a time: every value arrives once, each producer's in order.
func TestRingReserveUpToMPMC(t *testing.T) {
	r, err := NewRing("test", 16, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const producers, perProducer = 3, 20000
	wait := shmtest.StartProducers(producers, func(p int) {
		next := 0
		for chunk := 1; next < perProducer; chunk = chunk%7 + 1 {
			pos, got := r.ReserveUpTo(min(chunk, perProducer-next))
			if got == 0 {
				runtime.Gosched()
				continue
			}
			for k := range got {
				atomic.StoreUint64((*uint64)(r.Payload(pos+uint64(k))), uint64(p)<<32|uint64(next+k))
			}
			next += got
			for k := range got {
				r.Publish(pos + uint64(k))
			}
		}
	})
	seen := shmtest.NewArrivals(producers)
	for taken := 0; taken < producers*perProducer; {
		pos, ok := r.Claim()
		if !ok {
			runtime.Gosched()
			continue
		}
		v := atomic.LoadUint64((*uint64)(r.Payload(pos)))
		r.Release(pos)
		seen.See(t, int(v>>32), int(uint32(v)))
		taken++
	}
	wait()
}

// A receive ring whose consumers hand slots back out of order: the next
// slot a producer needs is claimed and still held while a later one is
// free. AwaitRelease waits for it (a post of receives then succeeds, as
// the count of outstanding receives says it should), and reports a ring
// full by count at once.
func TestRingAwaitRelease(t *testing.T) {
	r, err := NewRing("test", 4, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pos, got := r.ReserveUpTo(4)
	for k := range got {
		r.Publish(pos + uint64(k))
	}
	if r.AwaitRelease() {
		t.Fatal("AwaitRelease on a ring full of unclaimed slots said room")
	}
	first, _ := r.Claim()
	second, _ := r.Claim()
	r.Release(second) // out of order: first is still held
	if _, got := r.ReserveUpTo(1); got != 0 {
		t.Fatalf("ReserveUpTo took %d while the next slot is held", got)
	}
	go func() {
		time.Sleep(time.Millisecond)
		r.Release(first)
	}()
	if !r.AwaitRelease() {
		t.Fatal("AwaitRelease gave up on a slot released after 1 ms")
	}
	if _, got := r.ReserveUpTo(2); got != 2 {
		t.Fatalf("after the release reserveUpTo(2) took %d", got)
	}
}
