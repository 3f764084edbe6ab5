//go:build linux && cgo && urma_verbs

package verbs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGRHSource(t *testing.T) {
	v6 := make([]byte, GRHSize)
	v6[0] = 0x60
	src6 := [16]byte{0xfe, 0x80, 15: 0x42}
	copy(v6[8:], src6[:])
	gid, ok := GRHSource(v6)
	require.True(t, ok)
	require.Equal(t, src6, gid)

	v4 := make([]byte, GRHSize) // 20 unused bytes, then an IPv4 header
	v4[20] = 0x45
	copy(v4[32:], []byte{169, 254, 77, 1})
	gid, ok = GRHSource(v4)
	require.True(t, ok)
	require.Equal(t, [16]byte{10: 0xff, 11: 0xff, 12: 169, 13: 254, 14: 77, 15: 1}, gid)

	_, ok = GRHSource(make([]byte, GRHSize))
	require.False(t, ok, "no header")
	_, ok = GRHSource(v6[:GRHSize-1])
	require.False(t, ok, "short")
}
