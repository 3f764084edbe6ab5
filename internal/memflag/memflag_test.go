package memflag

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every byte of a word reads as itself, whatever its offset.
func TestLoadEachOffset(t *testing.T) {
	buf := make([]byte, 16)
	for i := range buf {
		buf[i] = byte(0xa0 + i)
	}
	for i := range buf {
		require.Equal(t, byte(0xa0+i), At(&buf[i]).Load(), "offset %d", i)
	}
	f := At(&buf[6])
	buf[6] = 7
	require.Equal(t, byte(7), f.Load(), "a later store is seen")
}
