package inbox

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"

	"github.com/urma-go/sdk/provider/loopback/internal/shm"
	"github.com/urma-go/sdk/provider/loopback/internal/shm/shmtest"
)

func newTestInbox(t testing.TB, cells int) *Inbox {
	t.Helper()
	b, err := New("test-inbox", cells)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// msg makes n bytes that tell their message apart: seed, then a count.
func msg(seed byte, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = seed + byte(i)
	}
	return p
}

// takeOne reads the oldest entry, copies its data out, and consumes it.
func takeOne(t testing.TB, b *Inbox) (Entry, []byte, bool) {
	t.Helper()
	var e Entry
	pos := b.Head()
	if !b.Peek(pos, &e) {
		return e, nil, false
	}
	out := make([]byte, e.Hdr.Len)
	if n := b.CopyOut(&e, out); n != int(e.Hdr.Len) {
		t.Fatalf("CopyOut copied %d of %d bytes", n, e.Hdr.Len)
	}
	b.Consume(pos + e.Cells)
	return e, out, true
}

func TestCells(t *testing.T) {
	for _, c := range []struct {
		n     int
		cells uint64
	}{{0, 1}, {1, 1}, {8, 1}, {9, 2}, {32, 2}, {33, 3}, {56, 3}, {57, 4}, {MaxData, 4}} {
		if got := Cells(c.n); got != c.cells {
			t.Errorf("Cells(%d) = %d, want %d", c.n, got, c.cells)
		}
	}
}

// A header comes out of its word as it went in.
func TestHeaderWord(t *testing.T) {
	h := Header{Len: 0x01020304, Route: 0x0506, Opcode: 0x07, Flags: 0x81}
	if got := HeaderOf(h.Word()); got != h {
		t.Fatalf("HeaderOf(%#x) = %+v, want %+v", h.Word(), got, h)
	}
}

// Every length from 0 to the most an entry holds comes out as it went in,
// with its header and immediate data, across many laps of a small inbox.
func TestRoundTrip(t *testing.T) {
	b := newTestInbox(t, 8)
	for lap := range 5 {
		for n := 0; n <= MaxData; n++ {
			h := Header{Len: uint32(n), Route: uint16(n + lap), Opcode: 3, Flags: 0x81}
			imm := uint64(n)<<32 | uint64(lap)
			data := msg(byte(n*7+lap), n)
			if _, ok := b.Put(h, imm, data); !ok {
				t.Fatalf("lap %d: Put of %d bytes found no room in an empty inbox", lap, n)
			}
			e, got, ok := takeOne(t, b)
			if !ok {
				t.Fatalf("lap %d: the entry of %d bytes is not there", lap, n)
			}
			if e.Hdr != h || e.Imm != imm || e.Cells != Cells(n) {
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
func TestCopyOutShort(t *testing.T) {
	b := newTestInbox(t, 8)
	data := msg(1, 40)
	if _, ok := b.Put(Header{Len: 40}, 0, data); !ok {
		t.Fatal("Put found no room")
	}
	var e Entry
	if !b.Peek(b.Head(), &e) {
		t.Fatal("entry not published")
	}
	out := make([]byte, 20)
	if n := b.CopyOut(&e, out); n != 20 || !bytes.Equal(out, data[:20]) {
		t.Fatalf("CopyOut = %d, %x; want 20, %x", n, out, data[:20])
	}
}

// A full inbox refuses a put, writes nothing, and takes it again once the
// consumer frees enough cells; an entry that needs more cells than are
// free is refused while a smaller one still fits.
func TestFull(t *testing.T) {
	b := newTestInbox(t, 8)
	for i := range 4 {
		if _, ok := b.Put(Header{Len: 9}, uint64(i), msg(byte(i), 9)); !ok {
			t.Fatalf("Put %d of 4 two-cell entries found no room", i)
		}
	}
	if _, ok := b.Put(Header{Len: 1}, 9, []byte{9}); ok {
		t.Fatal("a full inbox took an entry")
	}
	if _, _, ok := takeOne(t, b); !ok {
		t.Fatal("first entry missing")
	}
	if _, ok := b.Put(Header{Len: MaxData}, 0, msg(0, MaxData)); ok {
		t.Fatal("a four-cell entry went into two free cells")
	}
	if _, ok := b.Put(Header{Len: 9}, 4, msg(4, 9)); !ok {
		t.Fatal("a two-cell entry did not go into two free cells")
	}
	for i := 1; i <= 4; i++ {
		e, got, ok := takeOne(t, b)
		if !ok || e.Imm != uint64(i) || !bytes.Equal(got, msg(byte(i), 9)) {
			t.Fatalf("entry %d: %+v %x %v", i, e, got, ok)
		}
	}
}

// A cell left from the previous lap is not taken for a published entry,
// even when its old bytes (another entry's data) look like a header.
func TestStaleCells(t *testing.T) {
	b := newTestInbox(t, 4)
	// Data words that would read as an entry of 1 byte.
	fake := make([]byte, MaxData)
	for i := 0; i+8 <= len(fake); i += 8 {
		binary.NativeEndian.PutUint64(fake[i:], Header{Len: 1}.Word())
	}
	if _, ok := b.Put(Header{Len: MaxData}, 0, fake); !ok {
		t.Fatal("Put found no room")
	}
	if _, _, ok := takeOne(t, b); !ok {
		t.Fatal("entry missing")
	}
	for pos := b.Head(); pos < b.Head()+4; pos++ {
		var e Entry
		if b.Peek(pos, &e) {
			t.Fatalf("a consumed lap's cell at %d reads as an entry: %+v", pos, e)
		}
	}
}

// A producer that died with an entry's cells reserved, its further cell
// published and its first never: the repair's hole and the orphan cell
// each read as a one-cell entry of HoleRoute, and the entry after them
// as itself.
func TestHole(t *testing.T) {
	b := newTestInbox(t, 8)
	pos, ok := b.Reserve(2)
	if !ok {
		t.Fatal("Reserve found no room")
	}
	shm.StoreRelease(b.Ring().Seq(pos+1), (pos+2)|Cont)
	if _, ok := b.Put(Header{Len: 5, Route: 1}, 7, []byte("after")); !ok {
		t.Fatal("Put found no room")
	}
	if b.Waiting() {
		t.Fatal("a reserved cell reads as a message waiting")
	}
	if got := b.HeldCells(); len(got) != 1 || got[0] != pos {
		t.Fatalf("HeldCells = %v, want [%d]", got, pos)
	}
	b.Hole(pos)
	if !b.Waiting() {
		t.Fatal("the hole is not seen")
	}
	var e Entry
	for i := range uint64(2) {
		if !b.EntryAt(pos+i, &e) || e.Hdr.Route != HoleRoute || e.Cells != 1 {
			t.Fatalf("cell %d of the dead producer's entry: %+v", i, e)
		}
	}
	if !b.EntryAt(pos+2, &e) || e.Hdr.Route != 1 || e.Imm != 7 {
		t.Fatalf("the entry after the hole: %+v", e)
	}
	if len(b.HeldCells()) != 0 {
		t.Fatalf("cells held after the repair: %v", b.HeldCells())
	}
}

// Producers put at once; the one consumer gets every message once, each
// producer's in the order it put them, whole.
func TestMPSC(t *testing.T) {
	const producers, each = 4, 20000
	b := newTestInbox(t, 64)
	var stop atomic.Bool
	wait := shmtest.StartProducers(producers, func(p int) {
		for i := 0; i < each && !stop.Load(); {
			n := i % (MaxData + 1)
			if _, ok := b.Put(Header{Len: uint32(n), Route: uint16(p)}, uint64(i), msg(byte(i), n)); ok {
				i++
			}
		}
	})
	// On a failure, the producers stop before the inbox is unmapped.
	defer func() { stop.Store(true); wait() }()
	seen := shmtest.NewArrivals(producers)
	for got := 0; got < producers*each; {
		e, data, ok := takeOne(t, b)
		if !ok {
			continue
		}
		got++
		i := int(e.Imm)
		seen.See(t, int(e.Hdr.Route), i)
		if want := msg(byte(i), i%(MaxData+1)); !bytes.Equal(data, want) {
			t.Fatalf("producer %d message %d: %x, want %x", e.Hdr.Route, i, data, want)
		}
	}
	if _, _, ok := takeOne(t, b); ok {
		t.Fatal("an entry is left after every message arrived")
	}
}

// The consumer lock goes to one process at a time, and a holder whose
// process died is found dead and the lock taken from it.
func TestConsumerLock(t *testing.T) {
	b := newTestInbox(t, 8)
	self := uint32(os.Getpid())
	if !b.TryLock(self) {
		t.Fatal("a free lock was not taken")
	}
	if b.TryLock(self) {
		t.Fatal("a held lock was taken again")
	}
	if _, dead := b.DeadHolder(self); dead {
		t.Fatal("this process holds the lock and is taken for dead")
	}
	b.Unlock()
	if h := b.Held().Load(); h != 0 {
		t.Fatalf("the lock is held by %d after Unlock", h)
	}

	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := uint32(cmd.Process.Pid)
	b.Held().Store(dead)
	if h, isDead := b.DeadHolder(self); h != dead || !isDead {
		t.Fatalf("DeadHolder = %d, %v; want %d, true", h, isDead, dead)
	}
	if b.Lock(self, func() bool { return true }) {
		t.Fatal("Lock took the lock though gone says to stop")
	}
	if !b.Lock(self, nil) || b.Held().Load() != self {
		t.Fatal("Lock did not take the lock from its dead holder")
	}
	b.Unlock()
}
