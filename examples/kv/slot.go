package main

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A request slot of the server's request region holds, at its end,
//
//	[value: vlen bytes][vlen u16][key 16][opcode u8]
//
// right-aligned, so that every request is one contiguous range ending at
// the slot's last byte, the opcode: a GET writes the last 17 bytes (key and
// opcode), a PUT the last vlen+19. The server polls the opcode (a WRITE's
// last byte lands last) and clears it to mark the slot consumed. Slots are
// a multiple of 8 bytes, so the opcode ends an aligned 4-byte word that
// can be loaded and cleared atomically.
const (
	keySize  = 16
	slotTail = 2 + keySize + 1 // vlen, key, opcode
	maxValue = 4096
	opGet    = 1
	opPut    = 2
)

// slotSize is the size of a slot holding values of up to v bytes.
func slotSize(v int) int { return (v + slotTail + 7) &^ 7 }

// A response is [status u8][window u16][vlen u16][value], the window slot
// naming the request it answers (responses of different workers overtake
// each other). A SEND carries one or more responses back to back: a
// worker gathers the responses it has for a client in one scan into one
// SEND, as redis writes a pipeline's replies in one write. A message
// holds at most maxGather of them.
const (
	respHeader     = 5
	stOK           = 0 // GET found, PUT stored
	stNotFound     = 1 // GET of a missing key
	stBadRequest   = 2 // unknown opcode or a value length the slot cannot hold
	stTooBig       = 3 // GET of a value larger than the session's value size
	maxStatusValue = stTooBig
)

// maxGather is the most responses one SEND carries. A client's receive
// buffers hold that many (or a window's, if smaller); a worker gathers
// fewer when its device allows fewer SGEs in a request.
const maxGather = 16

// respSize is the largest response for values of up to v bytes.
func respSize(v int) int { return respHeader + v }

// gatherFor is how many responses a message carries at most in a session
// with this window.
func gatherFor(window int) int { return min(maxGather, window) }

// request is a decoded slot; key and value alias the slot.
type request struct {
	op    byte
	key   []byte
	value []byte
}

// putGet writes a GET for key at the end of slot and returns where the
// request starts.
func putGet(slot, key []byte) (int, error) {
	if len(key) != keySize || len(slot) < slotTail {
		return 0, fmt.Errorf("GET: key of %d bytes in a slot of %d", len(key), len(slot))
	}
	n := len(slot)
	copy(slot[n-1-keySize:], key)
	slot[n-1] = opGet
	return n - 1 - keySize, nil
}

// putPut writes a PUT of key and value at the end of slot and returns where
// the request starts.
func putPut(slot, key, value []byte) (int, error) {
	n := len(slot)
	if len(key) != keySize || len(value) > n-slotTail || len(value) > 0xffff {
		return 0, fmt.Errorf("PUT: key of %d bytes and value of %d in a slot of %d", len(key), len(value), n)
	}
	start := n - slotTail - len(value)
	copy(slot[start:], value)
	binary.BigEndian.PutUint16(slot[n-slotTail:], uint16(len(value)))
	copy(slot[n-1-keySize:], key)
	slot[n-1] = opPut
	return start, nil
}

var errBadRequest = errors.New("bad request")

// parseRequest decodes a slot whose opcode is set. For a GET the value
// length bytes are stale and ignored.
func parseRequest(slot []byte) (request, error) {
	n := len(slot)
	if n < slotTail {
		return request{}, fmt.Errorf("%w: slot of %d bytes", errBadRequest, n)
	}
	r := request{op: slot[n-1], key: slot[n-1-keySize : n-1]}
	switch r.op {
	case opGet:
		return r, nil
	case opPut:
		vlen := int(binary.BigEndian.Uint16(slot[n-slotTail:]))
		if vlen > n-slotTail {
			return request{}, fmt.Errorf("%w: PUT of %d bytes in a slot for %d", errBadRequest, vlen, n-slotTail)
		}
		r.value = slot[n-slotTail-vlen : n-slotTail]
		return r, nil
	}
	return request{}, fmt.Errorf("%w: opcode %d", errBadRequest, r.op)
}

// response is a decoded response; value aliases the message.
type response struct {
	status byte
	window int
	value  []byte
}

// putResponse writes a response into buf and returns its length.
func putResponse(buf []byte, status byte, window int, value []byte) (int, error) {
	n := respHeader + len(value)
	if len(buf) < n || window < 0 || window > 0xffff || len(value) > 0xffff {
		return 0, fmt.Errorf("response of %d bytes for window %d in a buffer of %d", n, window, len(buf))
	}
	buf[0] = status
	binary.BigEndian.PutUint16(buf[1:], uint16(window))
	binary.BigEndian.PutUint16(buf[3:], uint16(len(value)))
	copy(buf[respHeader:], value)
	return n, nil
}

// nextResponse decodes the response at the start of b, a received
// message, and returns it with the bytes after it.
func nextResponse(b []byte) (response, []byte, error) {
	if len(b) < respHeader {
		return response{}, nil, fmt.Errorf("response of %d bytes, shorter than its header", len(b))
	}
	r := response{status: b[0], window: int(binary.BigEndian.Uint16(b[1:]))}
	vlen := int(binary.BigEndian.Uint16(b[3:]))
	if vlen > len(b)-respHeader {
		return response{}, nil, fmt.Errorf("response of %d bytes says its value has %d", len(b), vlen)
	}
	if r.status > maxStatusValue {
		return response{}, nil, fmt.Errorf("response status %d", r.status)
	}
	r.value = b[respHeader : respHeader+vlen]
	return r, b[respHeader+vlen:], nil
}
