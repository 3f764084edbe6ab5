package redial

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A missing server is told once, with the caller's prefix, and the last
// try's error is returned after the wait.
func TestTellsOnceWithItsPrefix(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	var notes strings.Builder
	_, err = Dial(t.Context(), addr, 200*time.Millisecond, &notes, "tool: ")
	require.Error(t, err)
	require.Equal(t, 1, strings.Count(notes.String(), "tool: no server at "+addr+" yet ("), notes.String())
}
