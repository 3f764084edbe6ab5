package loopback

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// An inbox is where senders leave small messages for a receive queue to
// deliver itself, the first step of receiver-side SEND delivery (see
// docs/architecture.md). It is a JFC-style ring (consumers never write
// the cells, producers learn of free cells from deq) of 32-byte cells, so
// that a cell line carries two messages and only moves from the sender's
// core to the receiver's: a sender touches no line the receiver writes on
// every message, and reads deq only when its last reading says the inbox
// is full.
//
// A message is an entry of one or more consecutive cells. Each cell starts
// with its sequence word, as every ring slot does, so that a cell left
// from the ring's previous lap can never pass for a published one. The
// first cell holds the message's header, its immediate data and its first
// inboxHeadData bytes; each next cell inboxCellData more bytes.
type inbox struct {
	r *shm.Ring
}

const (
	inboxCell     = 32            // bytes of a cell, its sequence word included
	inboxHeadData = 8             // data bytes in an entry's first cell
	inboxCellData = inboxCell - 8 // data bytes in each further cell
	inboxMaxCells = 4             // the most cells one entry takes
	inboxMaxData  = inboxHeadData + (inboxMaxCells-1)*inboxCellData
)

// inboxHeader describes a message: its length, its opcode and flags, and
// the route (the sender's entry in the receive queue's route table, which
// names it in the receive record).
type inboxHeader struct {
	len    uint32
	route  uint16
	opcode uint8
	flags  uint8
}

func (h inboxHeader) word() uint64 {
	return uint64(h.len) | uint64(h.route)<<32 | uint64(h.opcode)<<48 | uint64(h.flags)<<56
}

func headerOf(w uint64) inboxHeader {
	return inboxHeader{len: uint32(w), route: uint16(w >> 32), opcode: uint8(w >> 48), flags: uint8(w >> 56)}
}

// inboxCells is how many cells a message of n bytes takes; n is at most
// inboxMaxData.
func inboxCells(n int) uint64 {
	if n <= inboxHeadData {
		return 1
	}
	return 1 + uint64(n-inboxHeadData+inboxCellData-1)/inboxCellData
}

// The mapping of an inbox is its ring, then the route table of the receive
// queue that owns it (see rqinbox.go), so that a sender in another process
// maps both with one descriptor.
const inboxTail = inboxRoutes * uint64(unsafe.Sizeof(routeSlot{}))

// newInbox makes an inbox of cells cells (rounded up to a power of two).
func newInbox(name string, cells int) (*inbox, error) {
	r, err := shm.NewRingOfSlots(name, cells, inboxCell, inboxTail)
	if err != nil {
		return nil, err
	}
	return &inbox{r: r}, nil
}

// attachInbox maps an inbox of cells cells that another process made and
// passed as fd (closed here, whatever happens).
func attachInbox(fd int, cells int) (*inbox, error) {
	r, err := shm.AttachRing(fd, cells, inboxCell, inboxTail)
	if err != nil {
		return nil, err
	}
	return &inbox{r: r}, nil
}

// routes is the route table that follows the ring in the mapping.
func (b *inbox) routes() *[inboxRoutes]routeSlot {
	return (*[inboxRoutes]routeSlot)(b.r.Tail())
}

// inboxCont marks the sequence word of an entry's further cells: published,
// but never the start of an entry. A cell whose entry's first cell was
// lost (its producer died, see repairInbox) is then skipped, not read as a
// message.
const inboxCont = 1 << 63

func (b *inbox) close() { b.r.Close() }

// cell returns the three payload words of the cell at pos.
func (b *inbox) cell(pos uint64) *[3]uint64 { return (*[3]uint64)(b.r.Payload(pos)) }

// put leaves a message of header h, immediate data imm and bytes data
// (len(data) at most inboxMaxData, and h.len set to it) and returns its
// position; false when the inbox has no room for it, and nothing was
// written. Any number of producers, in any process, may put at once.
func (b *inbox) put(h inboxHeader, imm uint64, data []byte) (uint64, bool) {
	pos, ok := b.r.ReserveRecords(inboxCells(len(data)))
	if !ok {
		return 0, false
	}
	b.write(pos, h, imm, data)
	return pos, true
}

// write fills and publishes the entry at pos, whose inboxCells(len(data))
// cells its producer reserved.
func (b *inbox) write(pos uint64, h inboxHeader, imm uint64, data []byte) {
	b.writeCells(pos, h.word(), imm, data, inboxCells(len(data)))
}

// writeCells is write with the header's word and the entry's k cells
// worked out by the caller (a prepared SEND, once at Prepare).
func (b *inbox) writeCells(pos, hdr, imm uint64, data []byte, k uint64) {
	head := b.cell(pos)
	head[0], head[1], head[2] = hdr, imm, firstWord(data)
	if k > 1 {
		b.writeRest(pos, data[inboxHeadData:], k)
	}
	// The first cell last: a consumer that sees it published sees the
	// rest published too (stores are seen in order).
	b.r.Publish(pos)
}

// writeRest fills and publishes the further cells of the entry of k cells
// at pos with rest, its data past the first cell's. A one-cell entry (a
// message rate's) skips it and its loop's setup, on the hot path of
// BenchmarkSendStream8LockFree (bench/instructions counts it).
func (b *inbox) writeRest(pos uint64, rest []byte, k uint64) {
	for i := uint64(1); i < k; i++ {
		c := (*[inboxCellData]byte)(b.r.Payload(pos + i))
		n := copy(c[:], rest)
		rest = rest[n:]
		shm.StoreRelease(b.r.Seq(pos+i), (pos+i+1)|inboxCont)
	}
}

// heldCells lists the cells a producer reserved and has not published,
// oldest first (see shm.Ring.HeldReserved).
func (b *inbox) heldCells() []uint64 { return b.r.HeldReservedMarked(inboxCont) }

// hole publishes the held cell at pos as an entry to skip: its producer
// died before it published it.
func (b *inbox) hole(pos uint64) {
	b.cell(pos)[0] = inboxHeader{route: inboxHole}.word()
	b.r.Publish(pos)
}

// firstWord is the first cell's data word of a message of bytes p: its
// first 8 bytes, or all of them packed (partialWord).
func firstWord(p []byte) uint64 {
	if len(p) >= inboxHeadData {
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

// inboxEntry is a message a consumer found: where it starts, how many
// cells it takes, and its header and immediate data.
type inboxEntry struct {
	pos   uint64
	cells uint64
	hdr   inboxHeader
	imm   uint64
}

// peek reads the entry at pos into e; false when none is published there
// yet, or when a faulty peer wrote a header no producer writes (then the
// inbox is stuck at pos, as a JFC ring is at a slot never published).
func (b *inbox) peek(pos uint64, e *inboxEntry) bool {
	if atomic.LoadUint64(b.r.Seq(pos)) != pos+1 {
		return false
	}
	head := b.cell(pos)
	e.pos, e.hdr, e.imm = pos, headerOf(head[0]), head[1]
	if e.hdr.len > inboxMaxData {
		return false
	}
	e.cells = inboxCells(int(e.hdr.len))
	return true
}

// entryAt reads the entry at pos into e, as peek does, and takes a further
// cell whose entry's first cell its dying producer never published (the
// repair made that one a hole) for a one-cell hole; false when nothing is
// published at pos.
func (b *inbox) entryAt(pos uint64, e *inboxEntry) bool {
	if inboxEntryHook != nil {
		inboxEntryHook()
	}
	if b.peek(pos, e) {
		return true
	}
	if atomic.LoadUint64(b.r.Seq(pos)) != (pos+1)|inboxCont {
		return false
	}
	e.pos, e.cells, e.hdr, e.imm = pos, 1, inboxHeader{route: inboxHole}, 0
	return true
}

// copyOut copies the message of e into dst (at most len(dst) bytes) and
// returns how many bytes it copied.
func (b *inbox) copyOut(e *inboxEntry, dst []byte) int {
	n := min(len(dst), int(e.hdr.len))
	if n == inboxHeadData {
		// A message rate's 8 bytes: one move, not a call to memmove.
		binary.NativeEndian.PutUint64(dst, b.cell(e.pos)[2])
		return n
	}
	if n == 0 {
		return 0
	}
	first := (*[inboxHeadData]byte)(unsafe.Pointer(&b.cell(e.pos)[2]))
	done := copy(dst[:n], first[:])
	for i := uint64(1); done < n; i++ {
		c := (*[inboxCellData]byte)(b.r.Payload(e.pos + i))
		done += copy(dst[done:n], c[:])
	}
	return n
}

// consume gives the cells before pos back to producers: every entry before
// it has been read. One consumer at a time (the caller's to arrange), so a
// plain store: an atomic one is a locked instruction, which would wait for
// the delivery's stores before the next message could be read.
func (b *inbox) consume(pos uint64) { shm.StoreRelease(b.r.DeqPos(), pos) }

// head is the position of the oldest entry not yet consumed.
func (b *inbox) head() uint64 { return atomic.LoadUint64(b.r.DeqPos()) }
