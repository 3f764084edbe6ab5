package main

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
)

// TestTwoClients: two client processes add to the owner's counter at once;
// no add is lost.
func TestTwoClients(t *testing.T) {
	bin := extest.Build(t)
	addr := extest.FreeAddr(t)
	srv := extest.Start(t, "owner", bin, "serve", "-clients", "2", "-addr", addr)
	srv.Await(regexp.MustCompile(`serving on `), 30*time.Second)
	a := extest.Start(t, "client a", bin, "add", "-n", "500", "-addr", addr)
	b := extest.Start(t, "client b", bin, "add", "-n", "700", "-addr", addr)
	for _, c := range []*extest.Proc{a, b} {
		out, err := c.Wait(30 * time.Second)
		require.NoError(t, err, out)
		assert.Regexp(t, `^added (500|700); the counter was \d+ before the last add\n$`, out)
	}
	out, err := srv.Wait(30 * time.Second)
	require.NoError(t, err, out)
	assert.Contains(t, out, "counter = 1200\n")
}

func TestUsage(t *testing.T) {
	bin := extest.Build(t)
	for _, args := range [][]string{nil, {"frob"}, {"add", "-n", "x"}} {
		out, err := extest.Start(t, "counter", bin, args...).Wait(30 * time.Second)
		assert.Equal(t, 2, extest.ExitCode(t, err), "%q: %s", args, out)
	}
}
