package main

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

func testJFR(id uint32) jetty.Descriptor {
	eid, _ := urma.ParseEID("::ffff:127.0.0.2")
	return jetty.Descriptor{ID: urma.JettyID{EID: eid, UASID: 7, ID: id}, Kind: jetty.KindJFR,
		Mode: urma.RM, TokenPolicy: segment.TokenPlainText}
}

func testWelcome() welcome {
	eid, _ := urma.ParseEID("::ffff:127.0.0.1")
	return welcome{workers: 3, slot: slotSize(32), regionToken: 0xabcdef01,
		region: segment.Descriptor{EID: eid, UASID: 9, VA: 0x7f0000000000, Len: 4096,
			Access: segment.Read | segment.Write, TokenPolicy: segment.TokenPlainText, TokenID: 5},
		jfrToken: 0x1234567, jfr: testJFR(11)}
}

func TestHelloRoundTrip(t *testing.T) {
	h := hello{window: 16, value: 1024, jfrToken: 0xdeadbeef, jfrs: []jetty.Descriptor{testJFR(1), testJFR(2)}}
	b, err := h.marshal()
	require.NoError(t, err)
	require.Len(t, b, helloHeader+2*jetty.DescriptorSize)
	got, err := parseHello(b)
	require.NoError(t, err)
	assert.Equal(t, h, got)
}

// withUint16 is a copy of b with the big-endian uint16 at off set to v.
func withUint16(b []byte, off int, v uint16) []byte {
	b = append([]byte(nil), b...)
	binary.BigEndian.PutUint16(b[off:], v)
	return b
}

func TestParseHelloRejects(t *testing.T) {
	good, err := hello{window: 4, value: 32, jfrToken: 1, jfrs: []jetty.Descriptor{testJFR(1)}}.marshal()
	require.NoError(t, err)
	with := func(off int, v uint16) []byte { return withUint16(good, off, v) }
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "without the"},
		{"short", good[:helloHeader-1], "without the"},
		{"magic", append([]byte("KVX1"), good[4:]...), "without the"},
		{"no clients", with(4, 0), "0 clients"},
		{"too many clients", with(4, maxClients+1), "257 clients"},
		{"more clients than descriptors", with(4, 2), "want 78"},
		{"window 0", with(6, 0), "window 0"},
		{"window too large", with(6, maxWindow+1), "window 1025"},
		{"value 0", with(8, 0), "value size 0"},
		{"value too large", with(8, maxValue+1), "value size 4097"},
		{"truncated descriptor", good[:len(good)-1], "want 46"},
		{"trailing byte", append(append([]byte(nil), good...), 0), "want 46"},
		{"bad descriptor", append(append([]byte(nil), good[:helloHeader]...), make([]byte, jetty.DescriptorSize)...), "JFR of client 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseHello(tc.b)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestHelloMarshalChecks(t *testing.T) {
	_, err := hello{window: 4, value: 32}.marshal()
	assert.ErrorContains(t, err, "0 clients")
	_, err = hello{window: 0, value: 32, jfrs: []jetty.Descriptor{testJFR(1)}}.marshal()
	assert.ErrorContains(t, err, "window 0")
}

func TestWelcomeRoundTrip(t *testing.T) {
	w := testWelcome()
	b, err := w.marshal()
	require.NoError(t, err)
	require.Len(t, b, welcomeSize)
	got, err := parseWelcome(b)
	require.NoError(t, err)
	assert.Equal(t, w, got)
}

func TestParseWelcomeRejects(t *testing.T) {
	good, err := testWelcome().marshal()
	require.NoError(t, err)
	patch := func(off int, v uint16) []byte { return withUint16(good, off, v) }
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "welcome: 0 bytes"},
		{"short", good[:welcomeSize-1], "want 96"},
		{"long", append(append([]byte(nil), good...), 1), "want 96"},
		{"magic", append([]byte("KVH1"), good[4:]...), "want 96"},
		{"no workers", patch(4, 0), "0 workers"},
		{"too many workers", patch(4, maxWorkers+1), "65 workers"},
		{"slot too small", patch(6, 8), "slot of 8"},
		{"slot unaligned", patch(6, 41), "slot of 41"},
		{"bad region", patch(12, 0), "region"},
		{"bad jfr", patch(12+segment.DescriptorSize+4, 0), "server JFR"},
		{"refusal", refusal(errBadRequest), "server refused: bad request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseWelcome(tc.b)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestWelcomeMarshalChecks(t *testing.T) {
	w := testWelcome()
	w.workers = 0
	_, err := w.marshal()
	assert.Error(t, err)
	w = testWelcome()
	w.slot = 1 << 16
	_, err = w.marshal()
	assert.Error(t, err)
}

func TestRefusalIsBounded(t *testing.T) {
	long := make([]byte, 5000)
	for i := range long {
		long[i] = 'x'
	}
	b := refusal(&stringError{string(long)})
	assert.Len(t, b, 4+1024)
}

type stringError struct{ s string }

func (e *stringError) Error() string { return e.s }

func TestDone(t *testing.T) {
	n, err := parseDone(marshalDone(1<<40 + 3))
	require.NoError(t, err)
	assert.Equal(t, uint64(1<<40+3), n)
	for _, b := range [][]byte{nil, []byte("KVD1"), append([]byte("KVD2"), make([]byte, 8)...), append(marshalDone(1), 0)} {
		_, err := parseDone(b)
		assert.Error(t, err, "%q", b)
	}
}

// FuzzParse feeds every decoder of what a peer sends (out-of-band
// messages, request slots the client WROTE, responses the server SENT) the
// same bytes. Each must reject or decode to values that its encoder turns
// back into the same bytes; the parts a decoder ignores (a GET's stale
// value length, slot bytes before the request) are left out of the
// comparison.
func FuzzParse(f *testing.F) {
	h, _ := hello{window: 4, value: 32, jfrToken: 1, jfrs: []jetty.Descriptor{testJFR(1)}}.marshal()
	w, _ := testWelcome().marshal()
	get := make([]byte, slotSize(32))
	_, _ = putGet(get, make([]byte, keySize))
	put := make([]byte, slotSize(32))
	_, _ = putPut(put, []byte("0123456789abcdef"), []byte("value"))
	resp := make([]byte, respSize(8))
	n, _ := putResponse(resp, stOK, 3, []byte("12345678"))
	for _, seed := range [][]byte{nil, {0}, h, w, marshalDone(7), refusal(errBadRequest), make([]byte, 64),
		get, put, resp[:n], withUint16(put, len(put)-slotTail, 0xffff)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if h, err := parseHello(b); err == nil {
			again, err := h.marshal()
			require.NoError(t, err)
			require.Equal(t, b, again, "hello")
		}
		if w, err := parseWelcome(b); err == nil {
			again, err := w.marshal()
			require.NoError(t, err)
			require.Equal(t, b, again, "welcome")
		} else if len(b) >= 4 && string(b[:4]) == string(magicRefusal[:]) {
			require.Contains(t, err.Error(), string(b[4:]), "a refusal must carry the server's reason")
		}
		if n, err := parseDone(b); err == nil {
			require.Equal(t, b, marshalDone(n), "done")
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
