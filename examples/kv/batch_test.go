package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// A batch of gathering SENDs that a full send queue takes only in part
// keeps the rest, each with its own SGEs, and posts them later: every
// message arrives whole, in order, as the concatenation of its pieces.
func TestBatchKeepsGathersOfRequestsLeftOver(t *testing.T) {
	ctx, err := exutil.Open("loopback", "loopback0", 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, ctx.Close()) }()
	cq, err := exutil.NewCompletions(ctx, 16, false)
	require.NoError(t, err)
	defer func() { require.NoError(t, cq.Close()) }()
	jfs, err := jetty.NewJFS(ctx, jetty.JFSConfig{Depth: 2, Mode: urma.RM, MaxSGE: 3, JFC: cq.JFC})
	require.NoError(t, err)
	defer func() { require.NoError(t, jfs.Close()) }()
	jfr, err := jetty.NewJFR(ctx, jetty.JFRConfig{Depth: 8, Mode: urma.RM, JFC: cq.JFC})
	require.NoError(t, err)
	defer func() { require.NoError(t, jfr.Close()) }()
	to, err := jetty.ImportJFR(context.Background(), ctx, jfr.Descriptor(), 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, to.Unimport()) }()

	// Source pieces: message m is "m0-" "m1-" "m2-" from three places.
	src, err := segment.Alloc(ctx, 64, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	defer func() { require.NoError(t, src.Unregister()) }()
	const msgs, pieces, piece = 4, 3, 3
	for m := range msgs {
		for p := range pieces {
			copy(src.Bytes()[(p*msgs+m)*piece:], fmt.Sprintf("%d%d-", m, p))
		}
	}
	dst, err := segment.Alloc(ctx, msgs*16, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	defer func() { require.NoError(t, dst.Unregister()) }()
	for m := range msgs {
		require.NoError(t, jfr.PostRecv([]jetty.RecvWR{{UserCtx: uint64(m),
			Local: []segment.SGE{dst.SGE(uint64(m*16), 16)}}}))
	}

	b := newBatch(msgs, pieces)
	for m := range msgs {
		w, local := b.next()
		w.Opcode, w.Flags, w.To, w.UserCtx = urma.OpSend, jetty.Signaled, to, uint64(m)
		w.Local = local
		for p := range pieces {
			w.Local = append(w.Local, src.SGE(uint64((p*msgs+m)*piece), piece))
		}
	}
	full, err := b.post(jfs)
	require.NoError(t, err)
	require.True(t, full, "a queue of depth 2 takes 2 of 4 requests")
	require.Equal(t, 2, b.n)
	for i := range b.n {
		assert.Equal(t, uint64(i+2), b.wrs[i].UserCtx)
		require.Len(t, b.wrs[i].Local, pieces)
		assert.Same(t, &b.sges[i*pieces], &b.wrs[i].Local[0], "request %d's SGEs are in its own room", i)
	}

	got := map[uint64]string{}
	sent := 0
	for len(got) < msgs || sent < msgs {
		if sent < msgs {
			if b.n > 0 {
				_, err := b.post(jfs)
				require.NoError(t, err)
			}
		}
		cr, err := cq.Next(context.Background(), waitLimit)
		require.NoError(t, err)
		require.True(t, cr.OK(), "%v", cr)
		if cr.Flags&jetty.CRRecv != 0 {
			got[cr.UserCtx] = string(dst.Bytes()[cr.UserCtx*16 : cr.UserCtx*16+uint64(cr.Len)])
		} else {
			sent++
		}
	}
	assert.Zero(t, b.n)
	for m := range msgs {
		assert.Equal(t, fmt.Sprintf("%d0-%d1-%d2-", m, m, m), got[uint64(m)], "message %d", m)
	}
}
