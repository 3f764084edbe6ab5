package perf

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// A peer that sends one endless message gets an error once it passes the
// cap, instead of making this side buffer it all.
func TestOOBMessageCap(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	o := newOOB(context.Background(), b)
	defer o.close()
	go func() {
		// An unterminated JSON string, 2 MiB long; the write ends when
		// the pipe closes.
		_, _ = a.Write([]byte(`{"Test":"` + strings.Repeat("x", 2*maxOOBMessage)))
	}()
	var h hello
	err := o.recv(&h)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a message of over 1048576 bytes")

	// Messages under the cap go through, one after another.
	c, d := net.Pipe()
	defer c.Close()
	o2 := newOOB(context.Background(), d)
	defer o2.close()
	go func() {
		enc := newOOB(context.Background(), c)
		for range 3 {
			_ = enc.send(phase{Done: true})
		}
	}()
	for range 3 {
		var p phase
		require.NoError(t, o2.recv(&p))
		assert.True(t, p.Done)
	}
}

// blame names the peer in a run's error: gone when its connection closed
// (with the first failed request's status if there was one), by name when
// a request to it failed; errors.Is and errors.As still see the cause.
func TestBlame(t *testing.T) {
	crErr := (&jetty.CR{Status: urma.CRAckTimeoutErr, WROpcode: urma.OpRead}).Err()
	closed := fmt.Errorf("out-of-band receive: %w", errPeerClosed)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&goneError{crErr}, "perf server 10.0.0.1:7 gone: urma: READ completed with ACK_TIMEOUT_ERR (ctx 0x0)"},
		{&goneError{closed}, "perf server 10.0.0.1:7 gone: out-of-band receive: the peer closed the connection"},
		{closed, "perf server 10.0.0.1:7 gone: out-of-band receive: the peer closed the connection"},
		{crErr, "perf server 10.0.0.1:7: urma: READ completed with ACK_TIMEOUT_ERR (ctx 0x0)"},
		{urma.ErrInvalid, "invalid argument"},
	} {
		got := blame("perf server 10.0.0.1:7", tc.err)
		assert.EqualError(t, got, tc.want)
		assert.ErrorIs(t, got, tc.err)
	}
	var cre *jetty.CRError
	require.ErrorAs(t, blame("x", &goneError{crErr}), &cre)
	assert.Equal(t, urma.CRAckTimeoutErr, cre.Status)
}
