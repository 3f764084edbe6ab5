package loopback

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// ringProto is one of the two ways the rings are used: receive rings
// (reserve, publish, claim, release) and JFC rings (reserveRecord,
// publish, claimRecord). The tests run on both.
type ringProto struct {
	name string
	push func(r *ring, v uint64) bool
	pop  func(r *ring) (uint64, bool)
}

func forEachProto(t *testing.T, f func(t *testing.T, p ringProto)) {
	recv := ringProto{name: "receive",
		push: func(r *ring, v uint64) bool {
			pos, ok := r.reserve()
			if !ok {
				return false
			}
			atomic.StoreUint64((*uint64)(r.payload(pos)), v)
			r.publish(pos)
			return true
		},
		pop: func(r *ring) (uint64, bool) {
			pos, ok := r.claim()
			if !ok {
				return 0, false
			}
			v := atomic.LoadUint64((*uint64)(r.payload(pos)))
			r.release(pos)
			return v, true
		}}
	record := ringProto{name: "record",
		push: func(r *ring, v uint64) bool {
			pos, ok := r.reserveRecord()
			if !ok {
				return false
			}
			// Two words that must agree, so that a torn copy of a
			// slot a producer was rewriting shows. The test rings'
			// slots (8-byte payload asked) have room for a crSlot.
			s := (*crSlot)(r.payload(pos))
			s.userCtx, s.word = v, ^v
			r.publish(pos)
			return true
		},
		pop: func(r *ring) (uint64, bool) {
			var rec crSlot
			if !claimRecord(r, &rec) {
				return 0, false
			}
			if rec.word != ^rec.userCtx {
				panic("torn record")
			}
			return rec.userCtx, true
		}}
	for _, p := range []ringProto{recv, record} {
		t.Run(p.name, func(t *testing.T) { f(t, p) })
	}
}

func TestRingFullEmpty(t *testing.T) {
	forEachProto(t, func(t *testing.T, p ringProto) {
		r, err := newRing("test", 4, 8)
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
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
		if r.count() != 4 {
			t.Fatalf("count = %d, want 4", r.count())
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
		r, err := newRing("test", 3, 8)
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
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
			if r.count() != 0 {
				t.Fatalf("round %d: count = %d after draining", round, r.count())
			}
		}
	})
}

func TestRingMPMC(t *testing.T) {
	forEachProto(t, func(t *testing.T, p ringProto) {
		const producers, consumers, per = 4, 4, 5000
		r, err := newRing("test", 64, 8)
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
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
		r, err := newRing("test", 8, 16)
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
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
		r, err := newRing("test", 1, 8)
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
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

func TestCRSlotIsOneCacheLine(t *testing.T) {
	if got := slotSizeFor(crSlotSize); got != 64 {
		t.Fatalf("a JFC ring slot is %d bytes (record %d + sequence 8); records must stay one cache line", got, crSlotSize)
	}
}
