package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
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

// model is what one client knows about the keys it owns.
type model struct {
	client, clients int
	versions        []uint32 // by owned index
	busy            []bool   // a request for the key is outstanding
	scratch         []byte
}

func newModel(client, clients, keys, value int) *model {
	n := (keys - client + clients - 1) / clients
	return &model{client: client, clients: clients, versions: make([]uint32, n), busy: make([]bool, n),
		scratch: make([]byte, value)}
}

func (m *model) owned() int { return len(m.versions) }

// id is the key number of owned index j.
func (m *model) id(j int) uint64 { return uint64(j*m.clients + m.client) }

// free returns the first owned index from j on with no request
// outstanding; the caller keeps more keys than its window.
func (m *model) free(j int) int {
	for m.busy[j] {
		if j++; j == len(m.busy) {
			j = 0
		}
	}
	return j
}

// check compares a GET's response with the model; it reports whether the
// model knew what to expect.
func (m *model) check(j int, r response, value int) (bool, error) {
	ver := m.versions[j]
	if ver == 0 {
		if r.status != stOK && r.status != stNotFound && r.status != stTooBig {
			return false, fmt.Errorf("GET of key %d: status %d", m.id(j), r.status)
		}
		return false, nil
	}
	if r.status != stOK {
		return true, fmt.Errorf("GET of key %d: status %d, but version %d was stored", m.id(j), r.status, ver)
	}
	want := m.scratch[:value]
	fillValue(want, m.id(j), ver)
	if !bytes.Equal(r.value, want) {
		return true, fmt.Errorf("GET of key %d: %d bytes that are not version %d's %d bytes", m.id(j), len(r.value), ver, value)
	}
	return true, nil
}
