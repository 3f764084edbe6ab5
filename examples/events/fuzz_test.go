package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseHello: the server sizes its run by the client's hello, so
// whatever it accepts must be in the limits a command line could set, and
// must be exactly what marshal makes of the decoded values.
func FuzzParseHello(f *testing.F) {
	for _, h := range []hello{
		{modes: []string{"poll", "event"}, count: 12345, size: 4096},
		{modes: []string{"event"}, count: 1, size: 1},
		{modes: []string{"poll"}, count: maxCount, size: maxSize},
		{modes: []string{"poll"}, count: maxCount + 1, size: maxSize + 1},
		{count: 1, size: 1},
	} {
		f.Add(h.marshal())
	}
	f.Add([]byte(helloMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHello(b)
		if err != nil {
			return
		}
		require.NotEmpty(t, h.modes)
		require.True(t, h.count >= 1 && h.count <= maxCount, "count %d", h.count)
		require.True(t, h.size >= 1 && h.size <= maxSize, "size %d", h.size)
		require.Equal(t, b, h.marshal())
	})
}

// FuzzReadReason: the server's answer to a hello. What readReason takes,
// writeReason sends as the bytes it consumed.
func FuzzReadReason(f *testing.F) {
	for _, reason := range []string{"", "the client asks for event mode, the server runs -mode poll"} {
		var b bytes.Buffer
		require.NoError(f, writeReason(&b, reason))
		f.Add(b.Bytes())
	}
	f.Add([]byte{0xff, 0xff, 'x'})
	f.Add([]byte{0, 5, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		reason, err := readReason(r)
		if err != nil {
			return
		}
		var again bytes.Buffer
		require.NoError(t, writeReason(&again, reason))
		require.Equal(t, b[:len(b)-r.Len()], again.Bytes())
	})
}
