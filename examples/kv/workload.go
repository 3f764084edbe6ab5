package main

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/urma-go/sdk/internal/prefetch"
)

// Keys are numbered 0 to keys-1; a key's 16 bytes are a hash of its number
// followed by the number, so they spread over the table like HERD's
// hashed keys. Client c of n owns the numbers c, c+n, c+2n, ...: nobody
// else writes them, so the client knows what a GET must return. A value is
// a function of key and version; the client keeps only the version it last
// PUT (0: not known, e.g. keys written by an earlier run).

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func keyOf(dst *[keySize]byte, id uint64) {
	binary.BigEndian.PutUint64(dst[:8], mix(id))
	binary.BigEndian.PutUint64(dst[8:], id)
}

// fillValue writes the value of version ver of key id.
func fillValue(dst []byte, id uint64, ver uint32) {
	x := mix(id ^ uint64(ver)<<40)
	for len(dst) >= 8 {
		binary.LittleEndian.PutUint64(dst, x)
		x = mix(x)
		dst = dst[8:]
	}
	for i := range dst {
		dst[i] = byte(x >> (8 * i))
	}
}

// valueIs reports whether b is the value of version ver of key id, as
// fillValue writes it, without writing the value anywhere.
func valueIs(b []byte, id uint64, ver uint32) bool {
	x := mix(id ^ uint64(ver)<<40)
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != x {
			return false
		}
		x = mix(x)
		b = b[8:]
	}
	for i := range b {
		if b[i] != byte(x>>(8*i)) {
			return false
		}
	}
	return true
}

// model is what one client knows about the keys it owns.
type model struct {
	client, clients int
	// state holds, by owned index, the version last PUT (0: not known)
	// and, in busyBit, whether a request for the key is outstanding. One
	// word per key: the random key a request picks costs one cache miss,
	// at issue; the response's check uses what issue read.
	state []uint32
}

// busyBit marks a key with a request outstanding; versions use the bits
// below it.
const busyBit = 1 << 31

func newModel(client, clients, keys int) *model {
	n := (keys - client + clients - 1) / clients
	return &model{client: client, clients: clients, state: make([]uint32, n)}
}

func (m *model) owned() int { return len(m.state) }

// id is the key number of owned index j.
func (m *model) id(j int) uint64 { return uint64(j*m.clients + m.client) }

// free returns the first owned index from j on with no request
// outstanding; the caller keeps more keys than its window.
func (m *model) free(j int) int {
	for m.state[j]&busyBit != 0 {
		if j++; j == len(m.state) {
			j = 0
		}
	}
	return j
}

// prefetch asks for the cache line of owned index j's word.
func (m *model) prefetch(j int) { prefetch.Read(unsafe.Pointer(&m.state[j])) }

// take marks owned index j busy and returns its version.
func (m *model) take(j int) uint32 {
	ver := m.state[j]
	m.state[j] = ver | busyBit
	return ver
}

// settle ends the request on owned index j: ver is its version now. It
// stores without reading, so that a response costs no miss on the model.
func (m *model) settle(j int, ver uint32) { m.state[j] = ver }

// nextVersion is the version a PUT over ver stores: never 0 (not known),
// and below busyBit.
func nextVersion(ver uint32) uint32 {
	if ver++; ver == busyBit {
		ver = 1
	}
	return ver
}

// check compares a GET's response with the model; it reports whether the
// model knew what to expect.
func (m *model) check(j int, ver uint32, r response, value int) (bool, error) {
	if ver == 0 {
		if r.status != stOK && r.status != stNotFound && r.status != stTooBig {
			return false, fmt.Errorf("GET of key %d: status %d", m.id(j), r.status)
		}
		return false, nil
	}
	if r.status != stOK {
		return true, fmt.Errorf("GET of key %d: status %d, but version %d was stored", m.id(j), r.status, ver)
	}
	if len(r.value) != value || !valueIs(r.value, m.id(j), ver) {
		return true, fmt.Errorf("GET of key %d: %d bytes that are not version %d's %d bytes", m.id(j), len(r.value), ver, value)
	}
	return true, nil
}
