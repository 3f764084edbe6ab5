package urmanet

import "encoding/binary"

// Message types (see the package doc's framing).
const (
	msgData uint8 = iota + 1
	msgCredit
	msgFin
	msgSyn
	msgSynAck
	msgRst
	msgRing
)

const (
	// hdrSize is the size of a message's header.
	hdrSize = 16
	// SlotSize is the size of one receive or send buffer; a DATA message
	// carries up to SlotSize-16 bytes of the stream.
	SlotSize = 8 << 10
	// Window is the number of receives a connection posts for DATA and
	// RING messages: the peer's initial credit.
	Window = 32
	// control is the number of further receives posted for CREDIT, FIN
	// and RST, and of send buffers kept for them: at most two CREDITs for
	// receives and two for ring bytes are unread at a time, with a FIN.
	control = 6
	// sendSlots is the number of send buffers for DATA and RING.
	sendSlots = 16
	// RingSize is the size of the ring a connection's peer WRITEs large
	// writes into.
	RingSize = 1 << 20
	// bigWrite is the size from which a Write goes through the peer's
	// ring rather than the send buffers.
	bigWrite = 32 << 10
	// ringChunk bounds one WRITE into the ring, so that a reader copies
	// out of one part while the writer fills the next.
	ringChunk = RingSize / 4
	// synSize is a SYN's or SYNACK's length: header, Jetty descriptor,
	// token, window, ring segment descriptor, ring size.
	synSize = hdrSize + 32 + 4 + 4 + 48 + 4
	// ringMsgSize is a RING message's length: header, byte count u64.
	ringMsgSize = hdrSize + 8
)

// putHdr writes a header: the message type, the receives and the ring
// bytes the sender returns to the peer.
func putHdr(b []byte, typ uint8, credit, ring uint32) {
	b[0], b[1], b[2], b[3] = typ, 0, 0, 0
	binary.LittleEndian.PutUint32(b[4:], credit)
	binary.LittleEndian.PutUint32(b[8:], ring)
	binary.LittleEndian.PutUint32(b[12:], 0)
}

func getHdr(b []byte) (typ uint8, credit, ring uint32) {
	return b[0], binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
}
