package loopback

import (
	"runtime"
	"testing"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
	"github.com/urma-go/sdk/provider/loopback/internal/shm/shmtest"
)

// A JFC record and its sequence word fill one cache line: a record moves
// between cores as that line alone.
func TestCRSlotIsOneCacheLine(t *testing.T) {
	if got := shm.SlotSizeFor(crSlotSize); got != 64 {
		t.Fatalf("a JFC ring slot is %d bytes (record %d + sequence 8); records must stay one cache line", got, crSlotSize)
	}
}

// A poller that claims records in batches of different sizes, while
// several producers write them: every record arrives once and whole, each
// producer's in order.
func TestClaimRecordsBatches(t *testing.T) {
	r, err := shm.NewRing("test", 16, crSlotSize)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const producers, perProducer = 3, 20000
	wait := shmtest.StartProducers(producers, func(p int) {
		for i := 0; i < perProducer; {
			pos, ok := r.ReserveRecord()
			if !ok {
				runtime.Gosched()
				continue
			}
			s := (*crSlot)(r.Payload(pos))
			v := uint64(p)<<32 | uint64(i)
			s.userCtx, s.word = v, ^v
			r.Publish(pos)
			i++
		}
	})
	seen := shmtest.NewArrivals(producers)
	var batch [7]provider.CR
	for taken, size := 0, 1; taken < producers*perProducer; size = size%7 + 1 {
		took, n := claimRecords(r, batch[:size], false)
		if took == 0 {
			runtime.Gosched()
			continue
		}
		if n != took || n > size {
			t.Fatalf("claimed %d slots, %d records, into room for %d", took, n, size)
		}
		for _, rec := range batch[:n] {
			if rec.Imm != ^rec.UserCtx {
				t.Fatalf("torn record %#x/%#x", rec.UserCtx, rec.Imm)
			}
			seen.See(t, int(rec.UserCtx>>32), int(uint32(rec.UserCtx)))
		}
		taken += n
	}
	wait()
}
