package exutil

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// NextRef hands out the records of one poll in order, in place, then polls
// again; with none it gives up after its limit with a nil record.
func TestNextRefReturnsRecordsInOrder(t *testing.T) {
	for _, event := range []bool{false, true} {
		dev, err := urma.DeviceByName("loopback0")
		require.NoError(t, err)
		ctx, err := urma.Open(dev, 0, nil)
		require.NoError(t, err)
		c, err := NewCompletions(ctx, 64, event)
		require.NoError(t, err)
		jfs, err := jetty.NewJFS(ctx, jetty.JFSConfig{JFC: c.JFC, Depth: 64})
		require.NoError(t, err)
		for i := range 20 { // more than one poll's worth
			require.NoError(t, jfs.NOP(0, uint64(i)))
		}
		for i := range 20 {
			cr, err := c.NextRef(context.Background(), time.Second)
			require.NoError(t, err)
			require.NotNil(t, cr)
			assert.Equal(t, uint64(i), cr.UserCtx, "event mode %v", event)
		}
		cr, err := c.NextRef(context.Background(), 20*time.Millisecond)
		require.Error(t, err)
		assert.Nil(t, cr)
		copied, err := c.Next(context.Background(), 20*time.Millisecond)
		require.Error(t, err)
		assert.Equal(t, jetty.CR{}, copied)
		require.NoError(t, jfs.Close())
		require.NoError(t, c.Close())
		require.NoError(t, ctx.Close())
	}
}

// Explain puts the failed request's record in front of the refusal that
// followed it: a WRITE into a segment its owner unregistered fails, its
// queue goes to ERROR, and the next post is refused.
func TestExplainFindsTheFailedRecord(t *testing.T) {
	dev, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	owner, err := urma.Open(dev, 0, nil)
	require.NoError(t, err)
	defer owner.Close()
	ctx, err := urma.Open(dev, 1, nil)
	require.NoError(t, err)
	defer ctx.Close()
	seg, err := segment.Alloc(owner, 4096, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	tgt, err := segment.Import(context.Background(), ctx, seg.Descriptor(), 0)
	require.NoError(t, err)
	defer tgt.Close()
	local, err := segment.Alloc(ctx, 4096, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	defer local.Close()
	c, err := NewCompletions(ctx, 16, false)
	require.NoError(t, err)
	defer c.Close()
	jfs, err := jetty.NewJFS(ctx, jetty.JFSConfig{JFC: c.JFC, Depth: 8})
	require.NoError(t, err)
	defer jfs.Close()

	// RM requests go through the owner's JFR, imported.
	ojfc, err := jetty.NewJFC(owner, jetty.JFCConfig{Depth: 8})
	require.NoError(t, err)
	defer ojfc.Close()
	ojfr, err := jetty.NewJFR(owner, jetty.JFRConfig{Depth: 8, JFC: ojfc})
	require.NoError(t, err)
	defer ojfr.Close()
	peer, err := jetty.ImportJFR(context.Background(), ctx, ojfr.Descriptor(), 0)
	require.NoError(t, err)
	defer peer.Close()

	require.NoError(t, seg.Close())
	require.NoError(t, jfs.Write(peer, tgt.SGE(0, 64), local.SGE(0, 64), 0, 7))
	refused := jfs.Write(peer, tgt.SGE(0, 64), local.SGE(0, 64), 0, 8)
	require.ErrorIs(t, refused, urma.ErrBadState)

	err = c.Explain(refused)
	var cre *jetty.CRError
	require.ErrorAs(t, err, &cre, "%v", err)
	assert.Equal(t, uint64(7), cre.UserCtx)
	assert.Equal(t, urma.OpWrite, cre.Opcode)
	assert.ErrorIs(t, err, urma.ErrBadState, "the refusal is kept after the cause")
	assert.Regexp(t, `^request failed: urma: WRITE completed with [A-Z_]+ \(ctx 0x7\) \(then: .*wrong state\)$`, err.Error())

	// Anything else, and a refusal with no failed record, is left alone.
	assert.Equal(t, urma.ErrInvalid, c.Explain(urma.ErrInvalid))
	assert.Equal(t, refused, c.Explain(refused))
}
