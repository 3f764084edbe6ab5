package jetty_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

func TestErrTimeoutCode(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		code uint8
	}{
		{0, 0}, {1, 0}, {4096 * time.Nanosecond, 0}, {4097 * time.Nanosecond, 1},
		{500 * time.Millisecond, 17}, // 4.096us*2^17 = 537ms, UMDK's typical value
		{4096 * time.Nanosecond << 31, 31},
	} {
		got, err := jetty.ErrTimeoutCode(c.d)
		require.NoError(t, err, "%v", c.d)
		require.Equal(t, c.code, got, "%v", c.d)
	}
	for _, d := range []time.Duration{-1, 4096*time.Nanosecond<<31 + 1} {
		_, err := jetty.ErrTimeoutCode(d)
		require.ErrorIs(t, err, urma.ErrInvalid, "%v", d)
	}
}
