package main

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// The out-of-band messages, after the client connects:
//
//	client -> server  hello: magic, modes, count, size
//	server -> client  reason: empty to accept, or why it refuses
//	then for each mode, both ways:
//	                  a bootstrap bundle: the JFR "inbox" and its token
//	server -> client  go (a byte): the server is serving
//	                  ... the ping-pong, over RDMA ...
//	both ways         done (a byte)
//
// The server takes count and size from the hello, so only the client needs
// to be told; the mode must agree because each side waits its own way.

const helloMagic = "evt1"

// helloLen is magic, a mode bit set, count (uint64), size (uint32).
const helloLen = len(helloMagic) + 1 + 8 + 4

// Mode bits of the hello; modes always run poll first.
const (
	bitPoll  = 1
	bitEvent = 2
)

// hello is the client's request.
type hello struct {
	modes []string
	count int
	size  int
}

func (h hello) marshal() []byte {
	b := make([]byte, 0, helloLen)
	b = append(b, helloMagic...)
	var bits byte
	if slices.Contains(h.modes, "poll") {
		bits |= bitPoll
	}
	if slices.Contains(h.modes, "event") {
		bits |= bitEvent
	}
	b = append(b, bits)
	b = binary.BigEndian.AppendUint64(b, uint64(h.count))
	return binary.BigEndian.AppendUint32(b, uint32(h.size))
}

// parseHello checks everything a client can get wrong, so that the server
// refuses with a reason instead of allocating or looping on nonsense.
func parseHello(b []byte) (hello, error) {
	var h hello
	if len(b) != helloLen || string(b[:len(helloMagic)]) != helloMagic {
		return h, errors.New("not an events client (bad hello)")
	}
	b = b[len(helloMagic):]
	bits := b[0]
	if bits&bitPoll != 0 {
		h.modes = append(h.modes, "poll")
	}
	if bits&bitEvent != 0 {
		h.modes = append(h.modes, "event")
	}
	if len(h.modes) == 0 || bits&^(bitPoll|bitEvent) != 0 {
		return h, fmt.Errorf("hello names no known mode (bits %#x)", bits)
	}
	count := binary.BigEndian.Uint64(b[1:])
	size := binary.BigEndian.Uint32(b[9:])
	if count == 0 || count > maxCount {
		return h, fmt.Errorf("hello asks for %d round trips", count)
	}
	if size == 0 || size > maxSize {
		return h, fmt.Errorf("hello asks for %d-byte messages, want 1 to %d", size, maxSize)
	}
	h.count, h.size = int(count), int(size)
	return h, nil
}

// writeReason sends the server's answer to a hello: the reason it
// refuses, empty to accept, after its length (uint16).
func writeReason(w io.Writer, reason string) error {
	reason = reason[:min(len(reason), math.MaxUint16)]
	_, err := w.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(reason))), reason...))
	return err
}

// readReason reads what writeReason sent.
func readReason(r io.Reader) (string, error) {
	var n uint16
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return string(b), err
}

// newToken returns a fresh non-zero JFR token: it is the secret that
// lets only the peer we told send to our JFR.
func newToken() (uint32, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	return max(1, binary.BigEndian.Uint32(b[:])), nil
}
