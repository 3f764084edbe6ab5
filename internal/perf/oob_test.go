package perf

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
