package main

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
)

func TestEcho(t *testing.T) {
	bin := extest.Build(t)
	addr := extest.FreeAddr(t)
	srv := extest.Start(t, "server", bin, "serve", "-addr", addr)
	srv.Await(regexp.MustCompile(`serving on `), 30*time.Second)
	cli := extest.Start(t, "client", bin, "send", "-addr", addr, "hello", "", "a longer message, one of several words")
	out, err := cli.Wait(30 * time.Second)
	require.NoError(t, err, out)
	assert.Equal(t, "echoed \"hello\"\nechoed \"\"\nechoed \"a longer message, one of several words\"\nechoed \"bye\"\n", out)
	out, err = srv.Wait(30 * time.Second)
	require.NoError(t, err, out)
	assert.Contains(t, out, "client said bye\n")
}

func TestUsage(t *testing.T) {
	bin := extest.Build(t)
	for _, args := range [][]string{nil, {"frob"}, {"serve", "-nope"}} {
		out, err := extest.Start(t, "echo", bin, args...).Wait(30 * time.Second)
		assert.Equal(t, 2, extest.ExitCode(t, err), "%q: %s", args, out)
	}
}
