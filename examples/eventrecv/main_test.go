package main

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
)

// TestCancel: the receiver sleeps between messages and Ctrl-C ends its
// wait at once.
func TestCancel(t *testing.T) {
	bin := extest.Build(t)
	addr := extest.FreeAddr(t)
	srv := extest.Start(t, "receiver", bin, "serve", "-addr", addr)
	srv.Await(regexp.MustCompile(`receiving on `), 30*time.Second)
	out, err := extest.Start(t, "sender", bin, "send", "-addr", addr, "hello", "world").Wait(30 * time.Second)
	require.NoError(t, err, out)
	assert.Equal(t, "sent 2 messages\n", out)
	srv.Await(regexp.MustCompile(`received "world"\n`), 30*time.Second)
	start := time.Now()
	require.NoError(t, srv.Interrupt())
	out, err = srv.Wait(10 * time.Second)
	require.NoError(t, err, out)
	assert.Less(t, time.Since(start), 2*time.Second, "the sleeping receiver noticed Ctrl-C late")
	assert.Contains(t, out, "received \"hello\"\nreceived \"world\"\nstopped (interrupt signal received) after 2 messages\n")
}

// TestDeadline: -for ends the receiver's wait.
func TestDeadline(t *testing.T) {
	bin := extest.Build(t)
	out, err := extest.Start(t, "receiver", bin, "serve", "-addr", extest.FreeAddr(t), "-for", "200ms").Wait(30 * time.Second)
	require.NoError(t, err, out)
	assert.Contains(t, out, "stopped (context deadline exceeded) after 0 messages\n")
}

func TestUsage(t *testing.T) {
	bin := extest.Build(t)
	for _, args := range [][]string{nil, {"frob"}, {"serve", "-for", "x"}} {
		out, err := extest.Start(t, "eventrecv", bin, args...).Wait(30 * time.Second)
		assert.Equal(t, 2, extest.ExitCode(t, err), "%q: %s", args, out)
	}
}
