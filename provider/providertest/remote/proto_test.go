package remote

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// An error that crosses the wire keeps its status for errors.Is and reads
// as it did in the peer.
func TestErrorRoundTrip(t *testing.T) {
	cases := []struct {
		err  error
		want error
	}{
		{provider.Errorf(provider.ErrInvalid, "jfc depth %d", 0), provider.ErrInvalid},
		{&urma.OpError{Op: "jfs post", Err: provider.Errorf(provider.ErrAgain, "queue full")}, provider.ErrAgain},
		{provider.ErrClosed, provider.ErrClosed},
		{fmt.Errorf("wrapped: %w", syscall.ENOSPC), syscall.ENOSPC},
		{errors.New("no status at all"), provider.ErrFail},
	}
	for _, c := range cases {
		got := decodeErr(encodeErr(c.err))
		require.ErrorIs(t, got, c.want, "%v", c.err)
		require.Equal(t, provider.StatusOf(c.err), provider.StatusOf(got))
		require.Equal(t, c.err.Error(), got.Error(), "the text is the peer's")
	}
	require.NoError(t, decodeErr(encodeErr(nil)))
	require.Equal(t, provider.ErrClosed, decodeErr(encodeErr(provider.ErrClosed)), "a bare status stays the sentinel")
}
