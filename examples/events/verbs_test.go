package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
	"github.com/urma-go/sdk/test/vm"
)

// TestVerbsOneProcess runs both modes, unchanged, on the guest's Soft-RoCE
// device through the ib provider: the server on its IPv4 EID, the client
// on its IPv6 link-local one.
func TestVerbsOneProcess(t *testing.T) {
	env := vm.Require(t)
	cfg := testConfig(t, "-provider", "ib", "-dev", env.RXE.Name, "-count", "200", "-size", "4096")
	var b bytes.Buffer
	require.NoError(t, run(context.Background(), cfg, &b), b.String())
	tb := parse(t, b.String())
	assert.Equal(t, "ib/"+env.RXE.Name, tb.dev)
	assert.Equal(t, []string{"poll", "event"}, tb.modes)
	checkRows(t, tb, true)
	t.Log("\n" + b.String())
}

// TestVerbsServerClient runs the server and the client as processes on
// rxe0, as two terminals would.
func TestVerbsServerClient(t *testing.T) {
	env := vm.Require(t)
	bin := extest.Build(t)
	dev := []string{"-provider", "ib", "-dev", env.RXE.Name}
	addr := extest.FreeAddr(t)
	srv := extest.Start(t, "server", bin, append(dev, "-server", "-addr", addr)...)
	srv.Await(listening, 30*time.Second)
	cli := extest.Start(t, "client", bin, append(dev, "-client", "-addr", addr, "-count", "200")...)
	out, err := cli.Wait(2 * time.Minute)
	require.NoError(t, err, out)
	tb := parse(t, out)
	assert.Equal(t, []string{"ib/" + env.RXE.Name, "200", "64", "client side"}, []string{tb.dev, tb.count, tb.size, tb.cpu})
	assert.Equal(t, []string{"poll", "event"}, tb.modes)
	checkRows(t, tb, true)
	t.Log("client:\n" + out)

	out, err = srv.Wait(30 * time.Second)
	require.NoError(t, err, out)
	tb = parse(t, out)
	assert.Equal(t, "server side", tb.cpu)
	checkRows(t, tb, false)
	t.Log("server:\n" + out)
}
