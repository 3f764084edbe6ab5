package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testKey = []byte("0123456789abcdef")

func TestSlotSize(t *testing.T) {
	for _, tc := range []struct{ value, slot int }{{1, 24}, {5, 24}, {6, 32}, {32, 56}, {1024, 1048}, {maxValue, 4120}} {
		assert.Equal(t, tc.slot, slotSize(tc.value), "value %d", tc.value)
		assert.Zero(t, slotSize(tc.value)%8)
	}
}

// A request is one contiguous range that ends at the slot's last byte, the
// opcode; a GET is the key and the opcode only.
func TestRequestRoundTrip(t *testing.T) {
	for _, value := range []int{1, 32, 1000, maxValue} {
		t.Run(fmt.Sprint(value), func(t *testing.T) {
			size := slotSize(value)
			slot := bytes.Repeat([]byte{0xee}, size)
			off, err := putGet(slot, testKey)
			require.NoError(t, err)
			assert.Equal(t, size-17, off)
			r, err := parseRequest(slot)
			require.NoError(t, err)
			assert.Equal(t, request{op: opGet, key: testKey}, r)

			for _, n := range []int{0, 1, value} {
				val := bytes.Repeat([]byte{0x5a}, n)
				slot := bytes.Repeat([]byte{0xee}, size)
				off, err := putPut(slot, testKey, val)
				require.NoError(t, err)
				assert.Equal(t, size-slotTail-n, off, "value of %d", n)
				assert.Equal(t, bytes.Repeat([]byte{0xee}, off), slot[:off], "bytes before the request untouched")
				r, err := parseRequest(slot)
				require.NoError(t, err)
				assert.Equal(t, byte(opPut), r.op)
				assert.Equal(t, testKey, r.key)
				assert.Equal(t, val, r.value)
			}
		})
	}
}

func TestPutRequestChecks(t *testing.T) {
	slot := make([]byte, slotSize(32))
	_, err := putPut(slot, testKey, make([]byte, len(slot)-slotTail+1))
	assert.Error(t, err, "value larger than the slot")
	_, err = putPut(slot, testKey[:15], nil)
	assert.Error(t, err, "short key")
	_, err = putGet(slot, testKey[:15])
	assert.Error(t, err, "short key")
	_, err = putGet(make([]byte, slotTail-1), testKey)
	assert.Error(t, err, "short slot")
}

func TestParseRequestRejects(t *testing.T) {
	size := slotSize(32)
	withOp := func(op byte) []byte {
		s := make([]byte, size)
		s[size-1] = op
		return s
	}
	bigPut := withOp(opPut)
	binary.BigEndian.PutUint16(bigPut[size-slotTail:], uint16(size-slotTail+1))
	hugePut := withOp(opPut)
	binary.BigEndian.PutUint16(hugePut[size-slotTail:], 0xffff)
	for _, tc := range []struct {
		name string
		slot []byte
		want string
	}{
		{"nil", nil, "slot of 0 bytes"},
		{"short", make([]byte, slotTail-1), "slot of 18 bytes"},
		{"empty opcode", withOp(0), "opcode 0"},
		{"unknown opcode", withOp(9), "opcode 9"},
		{"value longer than the slot", bigPut, "PUT of 38 bytes"},
		{"value length garbage", hugePut, "PUT of 65535 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseRequest(tc.slot)
			require.ErrorIs(t, err, errBadRequest)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestResponseRoundTrip(t *testing.T) {
	buf := make([]byte, respSize(64))
	for _, tc := range []struct {
		status byte
		window int
		value  []byte
	}{
		{stOK, 0, nil},
		{stOK, 1023, bytes.Repeat([]byte{7}, 64)},
		{stNotFound, 5, nil},
		{stBadRequest, 0xffff, nil},
		{stTooBig, 1, nil},
	} {
		n, err := putResponse(buf, tc.status, tc.window, tc.value)
		require.NoError(t, err)
		require.Equal(t, respHeader+len(tc.value), n)
		r, rest, err := nextResponse(buf[:n])
		require.NoError(t, err)
		assert.Empty(t, rest)
		assert.Equal(t, tc.status, r.status)
		assert.Equal(t, tc.window, r.window)
		assert.Equal(t, len(tc.value), len(r.value))
		assert.True(t, bytes.Equal(tc.value, r.value))
	}
	_, err := putResponse(buf, stOK, 0, make([]byte, 65))
	assert.Error(t, err, "value larger than the buffer")
	_, err = putResponse(buf, stOK, -1, nil)
	assert.Error(t, err, "negative window")
	_, err = putResponse(buf, stOK, 1<<16, nil)
	assert.Error(t, err, "window above 16 bits")
}

func TestParseResponseRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"nil", nil, "shorter than its header"},
		{"short", []byte{0, 0, 1, 0}, "shorter than its header"},
		{"length too large", []byte{0, 0, 1, 0, 2, 'x'}, "says its value has 2"},
		{"status", []byte{9, 0, 1, 0, 0}, "status 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := nextResponse(tc.b)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A message gathers several responses back to back; each decodes in turn,
// and trailing bytes too short for a response are an error, not a panic.
func TestResponsesBackToBack(t *testing.T) {
	var msg []byte
	buf := make([]byte, respSize(8))
	want := []response{{stOK, 3, []byte("12345678")}, {stNotFound, 0, nil}, {stOK, 15, []byte("ab")}}
	for _, r := range want {
		n, err := putResponse(buf, r.status, r.window, r.value)
		require.NoError(t, err)
		msg = append(msg, buf[:n]...)
	}
	rest := msg
	for _, w := range want {
		var r response
		var err error
		r, rest, err = nextResponse(rest)
		require.NoError(t, err)
		assert.Equal(t, w.status, r.status)
		assert.Equal(t, w.window, r.window)
		assert.Equal(t, string(w.value), string(r.value))
	}
	assert.Empty(t, rest)

	second := msg[respHeader+8 : 2*respHeader+8] // the NOT FOUND, no value
	_, rest, err := nextResponse(append(bytes.Clone(second), 'x'))
	require.NoError(t, err, "a response with one stray byte after it")
	_, _, err = nextResponse(rest)
	assert.ErrorContains(t, err, "shorter than its header")
}
