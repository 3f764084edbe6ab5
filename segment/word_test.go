package segment_test

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

func TestUint64(t *testing.T) {
	ctx := openLoopback(t)
	s, err := segment.Alloc(ctx, 64, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	w, err := s.Uint64(56)
	require.NoError(t, err)
	w.Store(0x0102030405060708)
	require.Equal(t, uint64(0x0102030405060708), binary.NativeEndian.Uint64(s.Bytes()[56:]), "host byte order, in the segment's memory")
	require.Equal(t, uint64(0x0102030405060709), w.Add(1))
	for _, off := range []uint64{60, 64, 1 << 63, 4} {
		_, err := s.Uint64(off)
		require.ErrorIs(t, err, urma.ErrRange, "offset %d", off)
	}
}

func openLoopback(t testing.TB) *urma.Context {
	t.Helper()
	dev, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	ctx, err := urma.Open(dev, 0, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ctx.Close() })
	return ctx
}
