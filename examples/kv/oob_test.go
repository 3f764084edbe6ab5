package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckSession(t *testing.T) {
	require.NoError(t, checkSession(1, 1, 1))
	require.NoError(t, checkSession(maxClients, maxWindow, maxValue))
	for _, tc := range []struct {
		clients, window, value int
		want                   string
	}{
		{0, 4, 32, "0 clients"},
		{maxClients + 1, 4, 32, "257 clients"},
		{1, 0, 32, "window 0"},
		{1, maxWindow + 1, 32, "window 1025"},
		{1, 4, 0, "value size 0"},
		{1, 4, maxValue + 1, "value size 4097"},
	} {
		assert.ErrorContains(t, checkSession(tc.clients, tc.window, tc.value), tc.want)
	}
}

// The client learns the number of workers from the request region's
// length, which must be a whole number of workers' parts.
func TestRegionWorkers(t *testing.T) {
	part := uint64(3 * 4 * slotSize(32))
	n, err := regionWorkers(5*part, 3, 4, 32)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	for _, size := range []uint64{0, part - 1, 5*part + 8, (maxWorkers + 1) * part} {
		_, err := regionWorkers(size, 3, 4, 32)
		assert.ErrorContains(t, err, "request region of", "%d bytes", size)
	}
}

func TestReason(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, writeReason(&b, ""))
	require.NoError(t, writeReason(&b, strings.Repeat("x", 70000)))
	got, err := readReason(&b)
	require.NoError(t, err)
	assert.Empty(t, got, "accepted")
	got, err = readReason(&b)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("x", math.MaxUint16), got, "a long reason is cut to what its length can say")
	_, err = readReason(bytes.NewReader([]byte{0, 9, 'x'}))
	assert.Error(t, err, "cut short")
}

// withUint16 is a copy of b with the big-endian uint16 at off set to v.
func withUint16(b []byte, off int, v uint16) []byte {
	b = append([]byte(nil), b...)
	binary.BigEndian.PutUint16(b[off:], v)
	return b
}

// FuzzParse feeds every decoder of what a peer sends (the server's
// reason, request slots the client WROTE, responses the server SENT) the
// same bytes. Each must reject or decode to values that its encoder turns
// back into the same bytes; the parts a decoder ignores (a GET's stale
// value length, slot bytes before the request, bytes after the reason)
// are left out of the comparison.
func FuzzParse(f *testing.F) {
	var reason bytes.Buffer
	_ = writeReason(&reason, "a request region of 1048 MiB")
	get := make([]byte, slotSize(32))
	_, _ = putGet(get, make([]byte, keySize))
	put := make([]byte, slotSize(32))
	_, _ = putPut(put, []byte("0123456789abcdef"), []byte("value"))
	resp := make([]byte, respSize(8))
	n, _ := putResponse(resp, stOK, 3, []byte("12345678"))
	for _, seed := range [][]byte{nil, {0}, reason.Bytes(), make([]byte, 64),
		get, put, resp[:n], withUint16(put, len(put)-slotTail, 0xffff)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		if reason, err := readReason(r); err == nil {
			var again bytes.Buffer
			require.NoError(t, writeReason(&again, reason))
			require.Equal(t, b[:len(b)-r.Len()], again.Bytes(), "reason")
		}

		if r, err := parseRequest(b); err != nil {
			require.ErrorIs(t, err, errBadRequest)
		} else {
			slot := make([]byte, len(b))
			var start int
			if r.op == opGet {
				start, err = putGet(slot, r.key)
			} else {
				start, err = putPut(slot, r.key, r.value)
			}
			require.NoError(t, err)
			require.Equal(t, b[start:], slot[start:], "request of opcode %d", r.op)
		}

		// A message of responses back to back re-encodes, response by
		// response, into the bytes it was decoded from.
		var again []byte
		for rest := b; len(rest) > 0; {
			r, next, err := nextResponse(rest)
			if err != nil {
				break
			}
			buf := make([]byte, respHeader+len(r.value))
			n, err := putResponse(buf, r.status, r.window, r.value)
			require.NoError(t, err)
			again = append(again, buf[:n]...)
			require.Equal(t, b[:len(b)-len(next)], again, "responses")
			rest = next
		}
	})
}
