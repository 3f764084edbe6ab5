package loopback

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/urma-go/sdk/provider"
)

func newTestInbox(t testing.TB, cells int) *inbox {
	t.Helper()
	b, err := newInbox("test-inbox", cells)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.close)
	return b
}

// inboxMsg makes n bytes that tell their message apart: seed, then a count.
func inboxMsg(seed byte, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = seed + byte(i)
	}
	return p
}

// takeOne reads the oldest entry, copies its data out, and consumes it.
func takeOne(t testing.TB, b *inbox) (inboxEntry, []byte, bool) {
	t.Helper()
	var e inboxEntry
	pos := b.head()
	if !b.peek(pos, &e) {
		return e, nil, false
	}
	out := make([]byte, e.hdr.len)
	if n := b.copyOut(&e, out); n != int(e.hdr.len) {
		t.Fatalf("copyOut copied %d of %d bytes", n, e.hdr.len)
	}
	b.consume(pos + e.cells)
	return e, out, true
}

func TestInboxCells(t *testing.T) {
	for _, c := range []struct {
		n     int
		cells uint64
	}{{0, 1}, {1, 1}, {8, 1}, {9, 2}, {32, 2}, {33, 3}, {56, 3}, {57, 4}, {inboxMaxData, 4}} {
		if got := inboxCells(c.n); got != c.cells {
			t.Errorf("inboxCells(%d) = %d, want %d", c.n, got, c.cells)
		}
	}
}

// Every length from 0 to the most an entry holds comes out as it went in,
// with its header and immediate data, across many laps of a small inbox.
func TestInboxRoundTrip(t *testing.T) {
	b := newTestInbox(t, 8)
	for lap := range 5 {
		for n := 0; n <= inboxMaxData; n++ {
			h := inboxHeader{len: uint32(n), route: uint16(n + lap), opcode: 3, flags: 0x81}
			imm := uint64(n)<<32 | uint64(lap)
			data := inboxMsg(byte(n*7+lap), n)
			if _, ok := b.put(h, imm, data); !ok {
				t.Fatalf("lap %d: put of %d bytes found no room in an empty inbox", lap, n)
			}
			e, got, ok := takeOne(t, b)
			if !ok {
				t.Fatalf("lap %d: the entry of %d bytes is not there", lap, n)
			}
			if e.hdr != h || e.imm != imm || e.cells != inboxCells(n) {
				t.Fatalf("lap %d, %d bytes: entry %+v, want header %+v imm %#x", lap, n, e, h, imm)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("lap %d, %d bytes: data %x, want %x", lap, n, got, data)
			}
		}
	}
	if _, _, ok := takeOne(t, b); ok {
		t.Fatal("an entry is left in a drained inbox")
	}
}

// A consumer with a short buffer gets the first bytes only.
func TestInboxCopyOutShort(t *testing.T) {
	b := newTestInbox(t, 8)
	data := inboxMsg(1, 40)
	if _, ok := b.put(inboxHeader{len: 40}, 0, data); !ok {
		t.Fatal("put found no room")
	}
	var e inboxEntry
	if !b.peek(b.head(), &e) {
		t.Fatal("entry not published")
	}
	out := make([]byte, 20)
	if n := b.copyOut(&e, out); n != 20 || !bytes.Equal(out, data[:20]) {
		t.Fatalf("copyOut = %d, %x; want 20, %x", n, out, data[:20])
	}
}

// A full inbox refuses a put, writes nothing, and takes it again once the
// consumer frees enough cells; an entry that needs more cells than are
// free is refused while a smaller one still fits.
func TestInboxFull(t *testing.T) {
	b := newTestInbox(t, 8)
	for i := range 4 {
		if _, ok := b.put(inboxHeader{len: 9}, uint64(i), inboxMsg(byte(i), 9)); !ok {
			t.Fatalf("put %d of 4 two-cell entries found no room", i)
		}
	}
	if _, ok := b.put(inboxHeader{len: 1}, 9, []byte{9}); ok {
		t.Fatal("a full inbox took an entry")
	}
	if _, _, ok := takeOne(t, b); !ok {
		t.Fatal("first entry missing")
	}
	if _, ok := b.put(inboxHeader{len: inboxMaxData}, 0, inboxMsg(0, inboxMaxData)); ok {
		t.Fatal("a four-cell entry went into two free cells")
	}
	if _, ok := b.put(inboxHeader{len: 9}, 4, inboxMsg(4, 9)); !ok {
		t.Fatal("a two-cell entry did not go into two free cells")
	}
	for i := 1; i <= 4; i++ {
		e, got, ok := takeOne(t, b)
		if !ok || e.imm != uint64(i) || !bytes.Equal(got, inboxMsg(byte(i), 9)) {
			t.Fatalf("entry %d: %+v %x %v", i, e, got, ok)
		}
	}
}

// A cell left from the previous lap is not taken for a published entry,
// even when its old bytes (another entry's data) look like a header.
func TestInboxStaleCells(t *testing.T) {
	b := newTestInbox(t, 4)
	// Data words that would read as an entry of 1 byte.
	fake := make([]byte, inboxMaxData)
	for i := 0; i+8 <= len(fake); i += 8 {
		binary.NativeEndian.PutUint64(fake[i:], inboxHeader{len: 1}.word())
	}
	if _, ok := b.put(inboxHeader{len: inboxMaxData}, 0, fake); !ok {
		t.Fatal("put found no room")
	}
	if _, _, ok := takeOne(t, b); !ok {
		t.Fatal("entry missing")
	}
	for pos := b.head(); pos < b.head()+4; pos++ {
		var e inboxEntry
		if b.peek(pos, &e) {
			t.Fatalf("a consumed lap's cell at %d reads as an entry: %+v", pos, e)
		}
	}
}

// Producers put at once; the one consumer gets every message once, each
// producer's in the order it put them, whole.
func TestInboxMPSC(t *testing.T) {
	const producers, each = 4, 20000
	b := newTestInbox(t, 64)
	var wg sync.WaitGroup
	var stop atomic.Bool
	// On a failure, the producers stop before the inbox is unmapped.
	defer func() { stop.Store(true); wg.Wait() }()
	for p := range producers {
		wg.Go(func() {
			for i := 0; i < each && !stop.Load(); {
				n := i % (inboxMaxData + 1)
				data := inboxMsg(byte(i), n)
				if _, ok := b.put(inboxHeader{len: uint32(n), route: uint16(p)}, uint64(i), data); ok {
					i++
				}
			}
		})
	}
	next := make([]uint64, producers)
	for got := 0; got < producers*each; {
		e, data, ok := takeOne(t, b)
		if !ok {
			continue
		}
		got++
		p := e.hdr.route
		if e.imm != next[p] {
			t.Fatalf("producer %d: message %d came after %d", p, e.imm, next[p]-1)
		}
		i := int(e.imm)
		if want := inboxMsg(byte(i), i%(inboxMaxData+1)); !bytes.Equal(data, want) {
			t.Fatalf("producer %d message %d: %x, want %x", p, i, data, want)
		}
		next[p]++
	}
	if _, _, ok := takeOne(t, b); ok {
		t.Fatal("an entry is left after every message arrived")
	}
}

// BenchmarkInboxStream8 streams 8-byte messages through an inbox from this
// goroutine to a consumer on another core, which copies each into a buffer
// and makes a receive record of it, as a receive queue delivering its own
// messages would. ns/op is the cost of one message across cores; compare
// BenchmarkSendStream8Cores, the same stream through Post and a JFR, in
// the same run.
func BenchmarkInboxStream8(b *testing.B) {
	box := newTestInbox(b, 1024)
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
	msg := inboxMsg(1, 8)
	h := inboxHeader{len: 8, opcode: uint8(provider.OpSend)}
	sent := int64(0)
	for b.Loop() {
		for {
			if _, ok := box.put(h, 0, msg); ok {
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
func drainTurn(box *inbox, crs []provider.CR, buf []byte) int {
	pos, n := box.head(), 0
	var e inboxEntry
	for n < len(crs) && box.peek(pos, &e) {
		c := &crs[n]
		c.Len = uint32(box.copyOut(&e, buf))
		c.WROpcode, c.Imm, c.UserCtx = provider.Opcode(e.hdr.opcode), e.imm, pos
		pos += e.cells
		n++
	}
	if n > 0 {
		box.consume(pos)
	}
	return n
}
