package jetty_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

func TestRecvPool(t *testing.T) {
	uctx := open(0)
	t.Cleanup(func() { _ = uctx.Close() })
	jfc, err := jetty.NewJFC(uctx, jetty.JFCConfig{Depth: 16})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(uctx, jetty.JFRConfig{Depth: 4, JFC: jfc})
	require.NoError(t, err)
	pool, err := jetty.NewRecvPool(uctx, jfr, 4, 64)
	require.NoError(t, err)
	t.Cleanup(func() { _ = jfr.Close(); _ = pool.Close() })
	require.Equal(t, 4, pool.Len())
	_, err = jetty.NewRecvPool(uctx, jfr, 1, 64)
	require.ErrorIs(t, err, urma.ErrAgain, "the JFR holds 4 receives: a fifth is refused")

	sjfc, err := jetty.NewJFC(uctx, jetty.JFCConfig{Depth: 16})
	require.NoError(t, err)
	jfs, err := jetty.NewJFS(uctx, jetty.JFSConfig{Depth: 8, JFC: sjfc})
	require.NoError(t, err)
	to, err := jetty.ImportJFR(t.Context(), uctx, jfr.Descriptor(), 0)
	require.NoError(t, err)
	src, err := segment.Alloc(uctx, 64, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	t.Cleanup(func() { _ = to.Close(); _ = jfs.Close(); _ = src.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	crs := make([]jetty.CR, 1)
	for i := range 10 { // more messages than slots: each slot is reposted
		msg := fmt.Sprintf("message %d", i)
		n := uint32(copy(src.Bytes(), msg))
		require.NoError(t, jfs.Send(to, src.SGE(0, n), 0, uint64(i)))
		_, err := sjfc.PollWait(ctx, crs, 0)
		require.NoError(t, err)
		require.NoError(t, crs[0].Err())
		_, err = jfc.PollWait(ctx, crs, 0)
		require.NoError(t, err)
		require.NoError(t, crs[0].Err())
		got, err := pool.Bytes(&crs[0])
		require.NoError(t, err)
		require.Equal(t, msg, string(got))
		require.Equal(t, uint64(i%4), crs[0].UserCtx, "slots are taken in posting order")
		require.NoError(t, pool.Repost(&crs[0]))
	}
	_, err = pool.Bytes(&jetty.CR{Flags: jetty.CRRecv, UserCtx: 4})
	require.ErrorIs(t, err, urma.ErrInvalid, "no slot 4")
	require.ErrorIs(t, pool.Repost(&jetty.CR{UserCtx: 0}), urma.ErrInvalid, "a send-side record")
	_, err = jetty.NewRecvPool(uctx, jfr, 0, 64)
	require.ErrorIs(t, err, urma.ErrInvalid)
}
