package inbox

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// An Inbox is the ring of cells where senders leave small messages for a
// receive queue, and the route table after it, in one shared mapping (see
// the package comment). Any number of producers, in any process, put
// entries at once; one consumer at a time (the holder of the consumer
// lock) reads and consumes them.
type Inbox struct {
	r *shm.Ring
}

const (
	// CellSize is the bytes of a cell, its sequence word included: a
	// cache line carries two.
	CellSize = 32
	// HeadData is the data bytes in an entry's first cell, after the
	// header and the immediate data.
	HeadData = 8
	// CellData is the data bytes in each further cell of an entry.
	CellData = CellSize - 8
	// MaxCells is the most cells one entry takes.
	MaxCells = 4
	// MaxData is the longest message an entry holds.
	MaxData = HeadData + (MaxCells-1)*CellData
)

// A Header describes a message: its length, its opcode and flags (the
// provider's), and the route (the sender's entry in the receive queue's
// route table, which names it in the receive record). It is the first
// payload word of an entry's first cell.
type Header struct {
	Len    uint32
	Route  uint16
	Opcode uint8
	Flags  uint8
}

// Word is the header's encoding in its cell.
func (h Header) Word() uint64 {
	return uint64(h.Len) | uint64(h.Route)<<32 | uint64(h.Opcode)<<48 | uint64(h.Flags)<<56
}

// HeaderOf decodes the header word w.
func HeaderOf(w uint64) Header {
	return Header{Len: uint32(w), Route: uint16(w >> 32), Opcode: uint8(w >> 48), Flags: uint8(w >> 56)}
}

// Cells is how many cells a message of n bytes takes; n is at most
// MaxData.
func Cells(n int) uint64 {
	if n <= HeadData {
		return 1
	}
	return 1 + uint64(n-HeadData+CellData-1)/CellData
}

// tail is the size of what follows the ring in the mapping: the route
// table, so that a sender in another process maps both with one
// descriptor.
const tail = Routes * uint64(unsafe.Sizeof(Route{}))

// New makes an inbox of cells cells (rounded up to a power of two).
func New(name string, cells int) (*Inbox, error) {
	r, err := shm.NewRingOfSlots(name, cells, CellSize, tail)
	if err != nil {
		return nil, err
	}
	return &Inbox{r: r}, nil
}

// Attach maps an inbox of cells cells that another process made and
// passed as fd (closed here, whatever happens).
func Attach(fd int, cells int) (*Inbox, error) {
	r, err := shm.AttachRing(fd, cells, CellSize, tail)
	if err != nil {
		return nil, err
	}
	return &Inbox{r: r}, nil
}

// Ring is the ring of the inbox's cells: its mapping, to pass to a peer,
// its capacity and its positions.
func (b *Inbox) Ring() *shm.Ring { return b.r }

// Routes is the route table that follows the ring in the mapping.
func (b *Inbox) Routes() *[Routes]Route {
	return (*[Routes]Route)(b.r.Tail())
}

// Cont marks the sequence word of an entry's further cells: published,
// but never the start of an entry. A cell whose entry's first cell was
// lost (its producer died, and the repair made that one a hole) is then
// skipped, not read as a message.
const Cont = 1 << 63

// Close unmaps the inbox.
func (b *Inbox) Close() { b.r.Close() }

// cell returns the three payload words of the cell at pos.
func (b *Inbox) cell(pos uint64) *[3]uint64 { return (*[3]uint64)(b.r.Payload(pos)) }

// Put leaves a message of header h, immediate data imm and bytes data
// (len(data) at most MaxData, and h.Len set to it) and returns its
// position; false when the inbox has no room for it, and nothing was
// written. Any number of producers, in any process, may put at once.
func (b *Inbox) Put(h Header, imm uint64, data []byte) (uint64, bool) {
	pos, ok := b.r.ReserveRecords(Cells(len(data)))
	if !ok {
		return 0, false
	}
	b.Write(pos, h, imm, data)
	return pos, true
}

// Reserve reserves k consecutive cells, for one entry or several, and
// returns the position of the first; false when the inbox has no room
// for them. Its producer must then write every entry in them (Write or
// WriteCells): a consumer never passes a cell reserved and not published.
func (b *Inbox) Reserve(k uint64) (uint64, bool) { return b.r.ReserveRecords(k) }

// Write fills and publishes the entry at pos, whose Cells(len(data))
// cells its producer reserved.
func (b *Inbox) Write(pos uint64, h Header, imm uint64, data []byte) {
	b.WriteCells(pos, h.Word(), imm, data, Cells(len(data)))
}

// WriteCells is Write with the header's word and the entry's k cells
// worked out by the caller (a prepared SEND, once at Prepare).
func (b *Inbox) WriteCells(pos, hdr, imm uint64, data []byte, k uint64) {
	head := b.cell(pos)
	head[0], head[1], head[2] = hdr, imm, firstWord(data)
	if k > 1 {
		b.writeRest(pos, data[HeadData:], k)
	}
	// The first cell last: a consumer that sees it published sees the
	// rest published too (stores are seen in order).
	b.r.Publish(pos)
}

// writeRest fills and publishes the further cells of the entry of k cells
// at pos with rest, its data past the first cell's. A one-cell entry (a
// message rate's) skips it and its loop's setup, on the hot path of a
// stream of small SENDs.
func (b *Inbox) writeRest(pos uint64, rest []byte, k uint64) {
	for i := uint64(1); i < k; i++ {
		c := (*[CellData]byte)(b.r.Payload(pos + i))
		n := copy(c[:], rest)
		rest = rest[n:]
		shm.StoreRelease(b.r.Seq(pos+i), (pos+i+1)|Cont)
	}
}

// HeldCells lists the cells a producer reserved and has not published,
// oldest first (see shm.Ring.HeldReserved).
func (b *Inbox) HeldCells() []uint64 { return b.r.HeldReservedMarked(Cont) }

// Hole publishes the held cell at pos as an entry to skip, of route
// HoleRoute: its producer died before it published it.
func (b *Inbox) Hole(pos uint64) {
	b.cell(pos)[0] = Header{Route: HoleRoute}.Word()
	b.r.Publish(pos)
}

// firstWord is the first cell's data word of a message of bytes p: its
// first 8 bytes, or all of them packed (partialWord).
func firstWord(p []byte) uint64 {
	if len(p) >= HeadData {
		return binary.NativeEndian.Uint64(p)
	}
	return partialWord(p)
}

// partialWord packs up to 8 bytes into a word, in memory order.
func partialWord(p []byte) uint64 {
	var w [8]byte
	copy(w[:], p)
	return binary.NativeEndian.Uint64(w[:])
}

// An Entry is a message a consumer found: where it starts, how many
// cells it takes, and its header and immediate data.
type Entry struct {
	Pos   uint64
	Cells uint64
	Hdr   Header
	Imm   uint64
}

// EntryHook, set only by tests, runs first thing when an inbox's message
// is read (EntryAt): a test posts there what must land in the middle of a
// delivery. In the read itself, so that nothing a delivery does before
// the read can come after the hook.
var EntryHook func()

// Peek reads the entry at pos into e; false when none is published there
// yet, or when a faulty peer wrote a header no producer writes (then the
// inbox is stuck at pos, as a JFC ring is at a slot never published).
func (b *Inbox) Peek(pos uint64, e *Entry) bool {
	if atomic.LoadUint64(b.r.Seq(pos)) != pos+1 {
		return false
	}
	head := b.cell(pos)
	e.Pos, e.Hdr, e.Imm = pos, HeaderOf(head[0]), head[1]
	if e.Hdr.Len > MaxData {
		return false
	}
	e.Cells = Cells(int(e.Hdr.Len))
	return true
}

// EntryAt reads the entry at pos into e, as Peek does, and takes a
// further cell whose entry's first cell its dying producer never
// published (the repair made that one a hole) for a one-cell hole; false
// when nothing is published at pos.
func (b *Inbox) EntryAt(pos uint64, e *Entry) bool {
	if EntryHook != nil {
		EntryHook()
	}
	if b.Peek(pos, e) {
		return true
	}
	if atomic.LoadUint64(b.r.Seq(pos)) != (pos+1)|Cont {
		return false
	}
	e.Pos, e.Cells, e.Hdr, e.Imm = pos, 1, Header{Route: HoleRoute}, 0
	return true
}

// CopyOut copies the message of e into dst (at most len(dst) bytes) and
// returns how many bytes it copied.
func (b *Inbox) CopyOut(e *Entry, dst []byte) int {
	n := min(len(dst), int(e.Hdr.Len))
	if n == HeadData {
		// A message rate's 8 bytes: one move, not a call to memmove.
		binary.NativeEndian.PutUint64(dst, b.cell(e.Pos)[2])
		return n
	}
	if n == 0 {
		return 0
	}
	first := (*[HeadData]byte)(unsafe.Pointer(&b.cell(e.Pos)[2]))
	done := copy(dst[:n], first[:])
	for i := uint64(1); done < n; i++ {
		c := (*[CellData]byte)(b.r.Payload(e.Pos + i))
		done += copy(dst[done:n], c[:])
	}
	return n
}

// Consume gives the cells before pos back to producers: every entry before
// it has been read. One consumer at a time (the caller's to arrange), so a
// plain store: an atomic one is a locked instruction, which would wait for
// the delivery's stores before the next message could be read.
func (b *Inbox) Consume(pos uint64) { shm.StoreRelease(b.r.DeqPos(), pos) }

// Head is the position of the oldest entry not yet consumed.
func (b *Inbox) Head() uint64 { return atomic.LoadUint64(b.r.DeqPos()) }
