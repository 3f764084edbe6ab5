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
)

const (
	// hdrSize is the size of a message's header.
	hdrSize = 8
	// SlotSize is the size of one receive or send buffer; a DATA message
	// carries up to SlotSize-8 bytes of the stream.
	SlotSize = 8 << 10
	// Window is the number of receives a connection posts for DATA: the
	// peer's initial credit.
	Window = 32
	// control is the number of further receives posted for CREDIT, FIN
	// and RST, and of send buffers kept for them: at most two CREDITs,
	// one FIN and one RST are in flight at a time.
	control = 4
	// sendSlots is the number of send buffers for DATA.
	sendSlots = 16
	// synSize is a SYN's or SYNACK's length: header, Jetty descriptor,
	// token, window.
	synSize = hdrSize + 32 + 4 + 4
)

func putHdr(b []byte, typ uint8, credit uint32) {
	b[0], b[1], b[2], b[3] = typ, 0, 0, 0
	binary.LittleEndian.PutUint32(b[4:], credit)
}

func getHdr(b []byte) (typ uint8, credit uint32) {
	return b[0], binary.LittleEndian.Uint32(b[4:])
}
