package loopback

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/inbox"
)

// The inbox's format is tested in package inbox. Here its stream across
// cores is measured next to the provider's streams, with the drain that
// DrainInbox shares.

// BenchmarkInboxStream8 streams 8-byte messages through an inbox from this
// goroutine to a consumer on another core, which copies each into a buffer
// and makes a receive record of it, as a receive queue delivering its own
// messages would. ns/op is the cost of one message across cores; compare
// BenchmarkSendStream8Cores, the same stream through Post and a JFR, in
// the same run.
func BenchmarkInboxStream8(b *testing.B) {
	box, err := inbox.New("bench-inbox", 1024)
	if err != nil {
		b.Fatal(err)
	}
	defer box.Close()
	var stop atomic.Bool
	var got atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		var crs [16]provider.CR
		buf := make([]byte, 8)
		for !stop.Load() {
			got.Add(int64(drainTurn(box, crs[:], buf)))
		}
	})
	msg := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	h := inbox.Header{Len: 8, Opcode: uint8(provider.OpSend)}
	sent := int64(0)
	for b.Loop() {
		for {
			if _, ok := box.Put(h, 0, msg); ok {
				break
			}
		}
		sent++
	}
	for got.Load() < sent {
	}
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mmsg/s")
}

// drainTurn reads up to len(crs) messages of box, each copied into buf and
// made into a record as a receive queue delivering its own would, gives
// their cells back, and returns how many it read.
func drainTurn(box *inbox.Inbox, crs []provider.CR, buf []byte) int {
	pos, n := box.Head(), 0
	var e inbox.Entry
	for n < len(crs) && box.Peek(pos, &e) {
		c := &crs[n]
		c.Len = uint32(box.CopyOut(&e, buf))
		c.WROpcode, c.Imm, c.UserCtx = provider.Opcode(e.Hdr.Opcode), e.Imm, pos
		pos += e.Cells
		n++
	}
	if n > 0 {
		box.Consume(pos)
	}
	return n
}
