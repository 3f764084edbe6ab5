package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
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

// FuzzParsePeer: the other side's JFR descriptor and token.
func FuzzParsePeer(f *testing.F) {
	eid, err := urma.ParseEID("::ffff:127.0.0.1")
	require.NoError(f, err)
	d := jetty.Descriptor{ID: urma.JettyID{EID: eid, UASID: 3, ID: 4}, Kind: jetty.KindJFR,
		Mode: urma.RM, TokenPolicy: segment.TokenPlainText}
	b, err := marshalPeer(d, 0xabcdef)
	require.NoError(f, err)
	f.Add(b)
	f.Add(b[:peerLen-1])
	f.Add(make([]byte, peerLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, token, err := parsePeer(b)
		if err != nil {
			return
		}
		again, err := marshalPeer(d, token)
		require.NoError(t, err)
		require.Equal(t, b, again)
	})
}
