package exutil

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/loopback"
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
