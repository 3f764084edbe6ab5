package ib

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A ping's nonce and payload travel in the request and come back in the
// reply; a reply with other bytes, or a refusal, does not answer it.
func TestPingEcho(t *testing.T) {
	payload := []byte("0123456789abcdef")
	for _, n := range []int{0, 1, pingEcho} {
		req := pingRequest(0x5eed, 7, payload[:n])
		got, err := parseRequest(append(req.marshal(), 0, 0)) // transports pad private data
		require.NoError(t, err)
		require.Equal(t, req, got)
		answer := pingReply(got)
		rep, err := parseReply(answer.marshal())
		require.NoError(t, err)
		require.True(t, rep.echoes(0x5eed, payload[:n]), "%d bytes", n)
		require.False(t, rep.echoes(0x5eee, payload[:n]), "another nonce")
		if n > 0 {
			other := append([]byte{}, payload[:n]...)
			other[n-1] ^= 1
			require.False(t, rep.echoes(0x5eed, other), "other bytes")
		}
		rep.status = replyNotFound
		require.False(t, rep.echoes(0x5eed, payload[:n]), "a refusal")
	}
}
