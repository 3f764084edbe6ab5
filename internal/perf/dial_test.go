package perf

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// closedPort returns the address of a port nothing listens on: one the
// kernel just handed out and was let go.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// A client whose server is not there says so at once, once, and gives up
// after its wait with the last try's error: the refusal, or (on a machine
// slow enough that a try outlasts what is left of the wait) its timeout.
func TestDialTellsOfAMissingServer(t *testing.T) {
	addr := closedPort(t)
	var log bytes.Buffer
	_, err := dialOOB(t.Context(), addr, 300*time.Millisecond, &log)
	var ne net.Error
	if !errors.Is(err, syscall.ECONNREFUSED) && !(errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("want a refusal or a try's timeout, got %v", err)
	}
	require.ErrorContains(t, err, "connect to the perf server at "+addr)
	require.Equal(t, 1, strings.Count(log.String(), "no server at "+addr+" yet"), "told once: %q", log.String())
}

// A server that starts listening while the client tries is reached.
func TestDialReachesALateServer(t *testing.T) {
	addr := closedPort(t)
	listening := make(chan net.Listener, 1)
	go func() {
		time.Sleep(250 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			listening <- nil
			return
		}
		listening <- l
	}()
	var log bytes.Buffer
	c, err := dialOOB(t.Context(), addr, 10*time.Second, &log)
	l := <-listening
	if l == nil {
		t.Skipf("port %s was taken meanwhile", addr)
	}
	defer l.Close()
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Contains(t, log.String(), "no server at "+addr+" yet")
}

// The caller's context ends the tries with its own error.
func TestDialEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := dialOOB(ctx, closedPort(t), time.Minute, nil)
	require.ErrorIs(t, err, context.Canceled)
}

// A host that cannot be reached by name fails at once, without tries.
func TestDialRefusesAnUnknownHostAtOnce(t *testing.T) {
	var log bytes.Buffer
	_, err := dialOOB(t.Context(), "no-such-host.invalid:1", time.Minute, &log)
	require.Error(t, err)
	require.ErrorContains(t, err, "connect to the perf server")
	require.Empty(t, log.String(), "no tries announced for an error no try mends")
}
