package ib

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
)

func TestRequestRoundTrip(t *testing.T) {
	eid, err := provider.ParseEID("fe80::1")
	require.NoError(t, err)
	for _, r := range []request{
		{op: opBind, target: 7, token: 0xdeadbeef, kind: provider.KindJetty, mode: provider.RC,
			policy: provider.TokenPlainText, srcEID: eid, srcUASID: 40000, srcID: 9, rnrTimer: 12, rnrRetry: 3},
		{op: opImportSegment, target: 3, token: 1, access: provider.AccessRead, srcUASID: 5, va: 1 << 40, len: 4096},
		{op: opDatagram, target: 4, token: 2, kind: provider.KindJFR, mode: provider.UM, srcEID: eid,
			srcUASID: 6, srcID: 7, srcQPN: 0xabcdef, srcIID: 0x0123456789abcdef},
	} {
		b := r.marshal()
		require.Len(t, b, requestSize)
		got, err := parseRequest(append(b, 0, 0, 0)) // transports pad private data
		require.NoError(t, err)
		require.Equal(t, r, got)
	}
}

func TestRequestRejectsGarbage(t *testing.T) {
	good := (&request{op: opConnect}).marshal()
	for name, b := range map[string][]byte{
		"short":      good[:requestSize-1],
		"magic":      append([]byte("XX"), good[2:]...),
		"version":    append(append([]byte{}, good[:2]...), append([]byte{9}, good[3:]...)...),
		"unknown op": append(append([]byte{}, good[:3]...), append([]byte{99}, good[4:]...)...),
		"zero op":    append(append([]byte{}, good[:3]...), append([]byte{0}, good[4:]...)...),
	} {
		_, err := parseRequest(b)
		require.ErrorIs(t, err, provider.ErrInvalid, name)
	}
}

func TestReplyCarriesTheSentinel(t *testing.T) {
	for _, sentinel := range []error{provider.ErrNotFound, provider.ErrInvalid, provider.ErrPermission,
		provider.ErrExist, provider.ErrBusy, provider.ErrClosed, provider.ErrBadState, provider.ErrNotSupported} {
		r := reply{status: replyCode(provider.Errorf(sentinel, "detail"))}
		got, err := parseReply(r.marshal())
		require.NoError(t, err)
		require.ErrorIs(t, got.err("import"), sentinel)
	}
	full := reply{rkey: 5, qpn: 6, qkey: 7, id: 8, gid: [16]byte{0: 0xfe, 1: 0x80, 15: 9}}
	ok, err := parseReply(full.marshal())
	require.NoError(t, err)
	require.NoError(t, ok.err("import"))
	require.Equal(t, full, ok)
	_, err = parseReply([]byte("UB"))
	require.ErrorIs(t, err, provider.ErrInvalid)
	bad := (&reply{}).marshal()
	bad[3] = 200
	_, err = parseReply(bad)
	require.ErrorIs(t, err, provider.ErrInvalid)
}

// FuzzParseRequest: connect requests come from any host that reaches the
// listener. Whatever parseRequest accepts must re-encode to the same bytes,
// but for the reserved ones and the padding a transport may add.
func FuzzParseRequest(f *testing.F) {
	eid, err := provider.ParseEID("fe80::1")
	require.NoError(f, err)
	f.Add((&request{op: opImportSegment, va: 4096, len: 64}).marshal())
	f.Add((&request{op: opBind, target: 7, token: 0xdeadbeef, kind: provider.KindJetty, mode: provider.RC,
		policy: provider.TokenPlainText, srcEID: eid, srcUASID: 40000, srcID: 9, rnrTimer: 12, rnrRetry: 3}).marshal())
	f.Add(append((&request{op: opDatagram, srcEID: eid, srcQPN: 0xabcdef, srcIID: 1}).marshal(), 0, 0, 0))
	f.Add((&request{op: opResolvePort, target: 7000}).marshal())
	f.Add((&request{op: opResolvePort + 1}).marshal())
	f.Add([]byte("UB\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRequest(b)
		if err != nil {
			require.ErrorIs(t, err, provider.ErrInvalid)
			return
		}
		enc := r.marshal()
		want := append([]byte{}, b[:requestSize]...)
		want[26], want[27] = 0, 0 // reserved
		require.Equal(t, want, enc)
		again, err := parseRequest(enc)
		require.NoError(t, err)
		require.Equal(t, r, again)
	})
}

// FuzzParseReply: replies come from the peer a request went to. Accepted
// ones must re-encode to the same bytes (but for the reserved ones and the
// padding), and a refusal must map to the sentinel of its status.
func FuzzParseReply(f *testing.F) {
	f.Add((&reply{rkey: 5, qpn: 6, qkey: 7, id: 8, gid: [16]byte{0: 0xfe, 1: 0x80, 15: 9}}).marshal())
	f.Add((&reply{status: replyPermission}).marshal())
	f.Add(append((&reply{status: replyFail}).marshal(), 0, 0))
	f.Add((&reply{status: replyFail + 1}).marshal())
	f.Add([]byte("UB\x02"))
	f.Add((&reply{id: 3, policy: provider.GroupPolicyHashHint, members: []uint32{4, 9, 1 << 31}}).marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseReply(b)
		if err != nil {
			require.ErrorIs(t, err, provider.ErrInvalid)
			return
		}
		enc := r.marshal()
		n := len(r.members)
		want := append([]byte{}, b[:replySize+4*n]...)
		if n == 0 {
			clear(want[20:24]) // reserved
		} else {
			clear(want[22:24])
		}
		require.Equal(t, want, enc)
		again, err := parseReply(enc)
		require.NoError(t, err)
		require.Equal(t, r, again)
		if rerr := r.err("import"); r.status == replyOK {
			require.NoError(t, rerr)
		} else {
			require.ErrorIs(t, rerr, replyErrors[r.status])
			require.Equal(t, r.status, replyCode(rerr), "the status must survive the trip through an error")
		}
	})
}
