package main

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/segment"
)

func TestRequestRoundTrip(t *testing.T) {
	b := make([]byte, maxRequest)
	payload := []byte("hello, storage")
	n := encodeRequest(b, header{id: 0x0102030405060708, size: uint16(len(payload)), typ: typeWrite}, payload)
	require.Equal(t, headerSize+len(payload)+tailSize, n)
	assert.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 14, 1}, b[:headerSize], "ID u64, Size u16, Type u8, big-endian")
	assert.Equal(t, crc32.ChecksumIEEE(payload), binary.BigEndian.Uint32(b[n-4:]))
	r, err := decodeRequest(b[:n])
	require.NoError(t, err)
	assert.Equal(t, payload, r.payload)
	assert.True(t, r.inline())

	// An RDMA request carries a view descriptor.
	d := segment.Descriptor{VA: 0x1000, Len: 8192, Access: segment.Read | segment.Write, TokenID: 3}
	db, err := d.MarshalBinary()
	require.NoError(t, err)
	n = encodeRequest(b, header{id: 9, size: 5000, typ: typeRead}, db)
	r, err = decodeRequest(b[:n])
	require.NoError(t, err)
	assert.Equal(t, d, r.desc)
	assert.False(t, r.inline())

	// Inline read: no body.
	n = encodeRequest(b, header{id: 9, size: 100, typ: typeRead}, nil)
	_, err = decodeRequest(b[:n])
	require.NoError(t, err)
}

func TestRequestRefusesGarbage(t *testing.T) {
	b := make([]byte, maxRequest)
	good := encodeRequest(b, header{id: 1, size: 4, typ: typeWrite}, []byte("abcd"))
	for name, tc := range map[string]struct {
		mod  func(m []byte) []byte
		want string
	}{
		"empty":        {func(m []byte) []byte { return nil }, "request of 0 bytes"},
		"short":        {func(m []byte) []byte { return m[:10] }, "the header and tail alone"},
		"type":         {func(m []byte) []byte { m[10] = 7; return m }, "request type 7"},
		"zero size":    {func(m []byte) []byte { m[8], m[9] = 0, 0; return m }, "request for 0 bytes"},
		"size vs body": {func(m []byte) []byte { m[9] = 5; return m }, "carries a 4-byte body, want 5"},
		"tail":         {func(m []byte) []byte { m[len(m)-1] ^= 1; return m }, "tail CRC32"},
		"payload":      {func(m []byte) []byte { m[headerSize] ^= 1; return m }, "tail CRC32"},
		"rdma body":    {func(m []byte) []byte { m[8], m[9] = 0x10, 0; return m }, "want 48"},
	} {
		m := tc.mod(append([]byte{}, b[:good]...))
		_, err := decodeRequest(m)
		assert.ErrorContains(t, err, tc.want, name)
	}
	// An RDMA request whose body is 48 bytes of garbage.
	n := encodeRequest(b, header{id: 1, size: 5000, typ: typeWrite}, make([]byte, segment.DescriptorSize))
	_, err := decodeRequest(b[:n])
	assert.ErrorContains(t, err, "view descriptor")
}

func TestResponse(t *testing.T) {
	b := make([]byte, maxResponse)
	n := encodeResponse(b, 42, statusNotFound, nil)
	id, st, p, err := decodeResponse(b[:n])
	require.NoError(t, err)
	assert.Equal(t, []any{uint64(42), byte(statusNotFound), 0}, []any{id, st, len(p)})
	n = encodeResponse(b, 43, statusOK, []byte("data"))
	id, st, p, err = decodeResponse(b[:n])
	require.NoError(t, err)
	assert.Equal(t, []any{uint64(43), byte(statusOK), "data"}, []any{id, st, string(p)})
	b[n-1] ^= 1
	_, _, _, err = decodeResponse(b[:n])
	assert.ErrorContains(t, err, "tail CRC32")
	for _, m := range [][]byte{nil, make([]byte, 8), make([]byte, 12)} {
		_, _, _, err := decodeResponse(m)
		assert.Error(t, err, "%d bytes", len(m))
	}
	assert.Equal(t, "status 9", statusName(9))
}

// withTail returns a copy of m whose last four bytes are the CRC32 of what
// lies between skip and them: random bytes almost never carry the right
// CRC, so the fuzz targets also try each input with it fixed, to reach
// what the decoders check after the CRC.
func withTail(m []byte, skip int) []byte {
	m = append([]byte{}, m...)
	if len(m) >= skip+tailSize {
		binary.BigEndian.PutUint32(m[len(m)-tailSize:], crc32.ChecksumIEEE(m[skip:len(m)-tailSize]))
	}
	return m
}

// FuzzDecodeRequest: requests are SENT by clients. A request is refused, or
// refused as corrupted with its header decoded (the server answers it), or
// decoded to what encodeRequest turns back into the same bytes.
func FuzzDecodeRequest(f *testing.F) {
	b := make([]byte, maxRequest)
	d, _ := (segment.Descriptor{VA: 0x1000, Len: 8192, Access: segment.Read | segment.Write, TokenID: 3}).MarshalBinary()
	for _, tc := range []struct {
		h    header
		body []byte
	}{
		{header{id: 1, size: 4, typ: typeWrite}, []byte("abcd")},
		{header{id: 2, size: 100, typ: typeRead}, nil},
		{header{id: 3, size: 5000, typ: typeWrite}, d},
		{header{id: 4, size: inlineMax + 1, typ: typeRead}, d},
		{header{id: 5, size: 5000, typ: typeRead}, make([]byte, segment.DescriptorSize)},
	} {
		n := encodeRequest(b, tc.h, tc.body)
		f.Add(append([]byte{}, b[:n]...))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, m []byte) {
		for _, m := range [][]byte{m, withTail(m, headerSize)} {
			r, err := decodeRequest(m)
			var crc *errCRC
			if errors.As(err, &crc) {
				require.Equal(t, binary.BigEndian.Uint64(m), r.id)
				require.Equal(t, binary.BigEndian.Uint16(m[8:]), r.size)
				require.Equal(t, m[10], r.typ)
				require.NotEqual(t, crc.stored, crc.computed)
				continue
			}
			if err != nil {
				continue
			}
			var body []byte
			switch {
			case !r.inline():
				body, err = r.desc.MarshalBinary()
				require.NoError(t, err)
			case r.typ == typeWrite:
				body = r.payload
				require.Len(t, body, int(r.size))
			default:
				require.Empty(t, r.payload)
			}
			again := make([]byte, headerSize+len(body)+tailSize)
			require.Equal(t, len(m), encodeRequest(again, r.header, body))
			require.Equal(t, m, again)
		}
	})
}

// FuzzDecodeResponse: responses are SENT by the server. A response decodes
// to what encodeResponse turns back into the same bytes, or is an error.
func FuzzDecodeResponse(f *testing.F) {
	b := make([]byte, maxResponse)
	for _, payload := range [][]byte{nil, []byte("d"), []byte("data")} {
		n := encodeResponse(b, 42, statusOK, payload)
		f.Add(append([]byte{}, b[:n]...))
	}
	f.Add(make([]byte, responseSize+tailSize))
	f.Fuzz(func(t *testing.T, m []byte) {
		for _, m := range [][]byte{m, withTail(m, responseSize)} {
			id, status, payload, err := decodeResponse(m)
			if err != nil {
				var crc *errCRC
				if errors.As(err, &crc) {
					require.NotEqual(t, crc.stored, crc.computed)
				}
				continue
			}
			again := make([]byte, len(m))
			require.Equal(t, len(m), encodeResponse(again, id, status, payload))
			require.Equal(t, m, again)
		}
	})
}
