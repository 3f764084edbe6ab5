package ib

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
)

// A port answer carries the published descriptor and token after a reply,
// within a reject's private data; a refusal maps to its sentinel and a
// short or damaged answer is refused.
func TestPortAnswer(t *testing.T) {
	eid, err := provider.ParseEID("192.0.2.7")
	require.NoError(t, err)
	desc := provider.JettyDesc{ID: provider.JettyID{EID: eid, UASID: 40001, ID: 3},
		Kind: provider.KindJetty, Mode: provider.RM, TokenPolicy: provider.TokenPlainText}
	b, err := portAnswer(desc, 0xfeedbeef)
	require.NoError(t, err)
	require.Len(t, b, portAnswerSize)
	require.LessOrEqual(t, portAnswerSize, rejectDataSize)

	pr := portRequest(7000, 40002)
	req, err := parseRequest(append(pr.marshal(), 0, 0))
	require.NoError(t, err)
	require.Equal(t, opResolvePort, req.op)
	require.Equal(t, uint32(7000), req.target)

	for _, pad := range []int{0, rejectDataSize - portAnswerSize} { // IB and RoCE pad rejects
		got, token, err := parsePortAnswer(append(append([]byte{}, b...), make([]byte, pad)...))
		require.NoError(t, err)
		require.Equal(t, desc, got)
		require.Equal(t, uint32(0xfeedbeef), token)
	}

	_, _, err = parsePortAnswer((&reply{status: replyNotFound}).marshal())
	require.ErrorIs(t, err, provider.ErrNotFound)
	_, _, err = parsePortAnswer(b[:portAnswerSize-1])
	require.ErrorIs(t, err, provider.ErrInvalid)
	bad := append([]byte{}, b...)
	bad[replySize] = 'X' // the descriptor's magic
	_, _, err = parsePortAnswer(bad)
	require.ErrorIs(t, err, provider.ErrInvalid)
	_, err = portAnswer(provider.JettyDesc{Kind: 99}, 1)
	require.ErrorIs(t, err, provider.ErrInvalid)
}
