package urmanet_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A deadline set after Close returns at once, whatever the deadlines
// before it were: gRPC's transport sets a write deadline on a connection
// it may have closed already.
func TestSetDeadlineAfterClose(t *testing.T) {
	l, d, a := pipe(t, openCtx(t, 0), openCtx(t, 1))
	defer l.Close()
	defer a.Close()
	require.NoError(t, d.SetDeadline(time.Now().Add(time.Hour)))
	require.NoError(t, d.Close())
	require.NoError(t, d.Close())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.SetWriteDeadline(time.Now().Add(time.Second))
		_ = d.SetReadDeadline(time.Now().Add(-time.Second))
		_ = d.SetDeadline(time.Time{})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("SetWriteDeadline after Close did not return")
	}
	_, err := d.Write([]byte("x"))
	require.Error(t, err)
}
