package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValueIsTellsFillValuesApart(t *testing.T) {
	for size := 1; size <= 40; size++ {
		v := make([]byte, size)
		fillValue(v, 7, 3)
		require.True(t, valueIs(v, 7, 3), "size %d", size)
		assert.False(t, valueIs(v, 7, 4), "size %d: another version", size)
		assert.False(t, valueIs(v, 8, 3), "size %d: another key", size)
		for i := range v {
			v[i] ^= 0x10
			assert.False(t, valueIs(v, 7, 3), "size %d: byte %d changed", size, i)
			v[i] ^= 0x10
		}
	}
}

func TestModelTracksBusyKeysAndVersions(t *testing.T) {
	m := newModel(1, 2, 10) // client 1 of 2 owns keys 1, 3, 5, 7, 9
	require.Equal(t, 5, m.owned())
	assert.Equal(t, uint64(7), m.id(3))

	assert.Equal(t, uint32(0), m.take(3), "a key starts with no known version")
	assert.Equal(t, 4, m.free(3), "a busy key is skipped")
	assert.Equal(t, uint32(0), m.take(4))
	assert.Equal(t, 0, m.free(3), "the search wraps around")

	m.settle(3, nextVersion(0))
	assert.Equal(t, 3, m.free(3), "a settled key is free again")
	assert.Equal(t, uint32(1), m.take(3), "with the version its PUT stored")

	assert.Equal(t, uint32(1), nextVersion(busyBit-1), "versions skip 0 and stay below busyBit")
}
