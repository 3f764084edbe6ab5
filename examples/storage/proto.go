package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/urma-go/sdk/segment"
)

// The protocol. A request is a header {ID u64, Size u16, Type u8},
// a body and a tail {CRC32 u32}; a response is {ID u64, Status u8}. All
// big-endian.
//
// Small payloads (up to inlineMax bytes) travel in the SEND: a write
// request's body is the payload and the tail is the CRC32 of the payload;
// a read response carries the payload and its CRC32 after the status.
// Larger payloads are moved by the server with RDMA: the body is then the
// 48-byte descriptor of the client's exposed view, which the server READs
// (write request) or WRITEs (read request), and the tail is the CRC32 of
// the body. Both views carry a CRC32 per stored chunk on the wire, so the
// data is checked chunk by chunk on the transfer itself.
//
// ID is the request's unique ID, and more: a write stores its data under
// its ID and a read asks for the data of an ID, which makes the pair a
// small object store.

// Request types.
const (
	typeRead  = 0
	typeWrite = 1
)

// Response statuses.
const (
	statusOK        = 0
	statusNotFound  = 1 // no data under the ID
	statusCorrupted = 2 // a CRC did not match: nothing was stored (write) or sent (read)
	statusBadReq    = 3 // malformed request, or a size that does not match the stored one
	statusNoSpace   = 4 // the store has too few free chunks
)

var statusNames = []string{"ok", "not found", "corrupted", "bad request", "no space"}

func statusName(s byte) string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status %d", s)
}

const (
	headerSize   = 11
	tailSize     = 4
	responseSize = 9
	// inlineMax is the largest payload carried in the SEND.
	inlineMax = 1024
	// maxRequest is the largest request message.
	maxRequest = headerSize + inlineMax + tailSize
	// maxResponse is the largest response: an inline read's.
	maxResponse = responseSize + inlineMax + tailSize
	// maxPayload is what Size (u16) can say.
	maxPayload = 1<<16 - 1
)

// header is a request's header.
type header struct {
	id   uint64
	size uint16
	typ  uint8
}

// inline reports whether the payload travels in the messages.
func (h header) inline() bool { return int(h.size) <= inlineMax }

// encodeRequest builds a request into b and returns its length. body is
// the payload (inline write), the view descriptor (RDMA), or nothing
// (inline read).
func encodeRequest(b []byte, h header, body []byte) int {
	binary.BigEndian.PutUint64(b, h.id)
	binary.BigEndian.PutUint16(b[8:], h.size)
	b[10] = h.typ
	n := headerSize + copy(b[headerSize:], body)
	binary.BigEndian.PutUint32(b[n:], crc32.ChecksumIEEE(body))
	return n + tailSize
}

// request is a decoded request: for RDMA ones, desc names the client's
// view.
type request struct {
	header
	payload []byte
	desc    segment.Descriptor
}

// errCRC marks a request whose tail does not match its body.
type errCRC struct{ stored, computed uint32 }

func (e *errCRC) Error() string {
	return fmt.Sprintf("tail CRC32 %#08x, the body gives %#08x", e.stored, e.computed)
}

// decodeRequest checks a received request. A malformed one is an error; a
// well-formed one whose tail does not match is an *errCRC (with the header
// decoded, so the server can answer it).
func decodeRequest(b []byte) (request, error) {
	var r request
	if len(b) < headerSize+tailSize {
		return r, fmt.Errorf("request of %d bytes, the header and tail alone take %d", len(b), headerSize+tailSize)
	}
	r.id, r.size, r.typ = binary.BigEndian.Uint64(b), binary.BigEndian.Uint16(b[8:]), b[10]
	if r.typ != typeRead && r.typ != typeWrite {
		return r, fmt.Errorf("request type %d", r.typ)
	}
	if r.size == 0 {
		return r, fmt.Errorf("request for 0 bytes")
	}
	body := b[headerSize : len(b)-tailSize]
	want := 0
	switch {
	case !r.inline():
		want = segment.DescriptorSize
	case r.typ == typeWrite:
		want = int(r.size)
	}
	if len(body) != want {
		return r, fmt.Errorf("%s request of %d bytes carries a %d-byte body, want %d", typeName(r.typ), r.size, len(body), want)
	}
	if stored, computed := binary.BigEndian.Uint32(b[len(b)-tailSize:]), crc32.ChecksumIEEE(body); stored != computed {
		return r, &errCRC{stored, computed}
	}
	if r.inline() {
		r.payload = body
		return r, nil
	}
	if err := r.desc.UnmarshalBinary(body); err != nil {
		return r, fmt.Errorf("view descriptor: %w", err)
	}
	return r, nil
}

func typeName(t uint8) string {
	if t == typeWrite {
		return "write"
	}
	return "read"
}

// encodeResponse builds a response; payload is an inline read's data.
func encodeResponse(b []byte, id uint64, status byte, payload []byte) int {
	binary.BigEndian.PutUint64(b, id)
	b[8] = status
	if len(payload) == 0 {
		return responseSize
	}
	n := responseSize + copy(b[responseSize:], payload)
	binary.BigEndian.PutUint32(b[n:], crc32.ChecksumIEEE(payload))
	return n + tailSize
}

// decodeResponse checks a response; payload is an inline read's data,
// checked against its CRC32.
func decodeResponse(b []byte) (id uint64, status byte, payload []byte, err error) {
	if len(b) < responseSize {
		return 0, 0, nil, fmt.Errorf("response of %d bytes, want at least %d", len(b), responseSize)
	}
	id, status = binary.BigEndian.Uint64(b), b[8]
	if len(b) == responseSize {
		return id, status, nil, nil
	}
	if len(b) < responseSize+1+tailSize {
		return id, status, nil, fmt.Errorf("response of %d bytes", len(b))
	}
	payload = b[responseSize : len(b)-tailSize]
	if stored, computed := binary.BigEndian.Uint32(b[len(b)-tailSize:]), crc32.ChecksumIEEE(payload); stored != computed {
		return id, status, nil, &errCRC{stored, computed}
	}
	return id, status, payload, nil
}
