package main

import (
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
)

// Generous bounds: the VM job runs these under emulation.
const (
	startLimit = 60 * time.Second
	runLimit   = 3 * time.Minute
)

// startServer starts a server process and waits until it listens.
func startServer(t *testing.T, bin, addr string, dev []string) *extest.Proc {
	t.Helper()
	srv := extest.Start(t, "server", bin, append([]string{"-server", "-addr", addr, "-workers", "2"}, dev...)...)
	srv.Await(regexp.MustCompile(`kv: server listening on `+regexp.QuoteMeta(addr)), startLimit)
	return srv
}

// interrupted sends Ctrl-C and checks that the program freed its
// resources and said so.
func interrupted(t *testing.T, p *extest.Proc) string {
	t.Helper()
	require.NoError(t, p.Interrupt())
	out, err := p.Wait(runLimit)
	assert.Equal(t, 130, extest.ExitCode(t, err), "output:\n%s", out)
	assert.Regexp(t, `(?m)^kv: interrupted$`, out)
	return out
}

// testProcesses runs a server process and clients in both modes against
// it, one after the other, then interrupts the idle server. dev selects
// the device (nothing for loopback).
func testProcesses(t *testing.T, requests int, dev ...string) {
	bin := extest.Build(t)
	addr := extest.FreeAddr(t)
	srv := startServer(t, bin, addr, dev)
	for i, mode := range []string{"poll", "event"} {
		cli := extest.Start(t, "client-"+mode, bin, append([]string{"-client", "-addr", addr, "-clients", "2", "-window", "4",
			"-requests", strconv.Itoa(requests), "-duration", "0", "-keys", "64", "-mode", mode}, dev...)...)
		out, err := cli.Wait(runLimit)
		require.NoError(t, err, out)
		m := summary.FindStringSubmatch(out)
		require.NotNil(t, m, "output:\n%s", out)
		assert.Equal(t, strconv.Itoa(requests), m[1])
		assert.Equal(t, "0", m[5], "unknown")
		assert.Equal(t, m[7], m[8], "sent and served")
		assert.Equal(t, strconv.Itoa(requests+64), m[7])
		srv.Await(regexp.MustCompile(`kv: session `+strconv.Itoa(i+1)+`: served `+strconv.Itoa(requests+64)+` requests`), startLimit)
	}
	interrupted(t, srv)
}

func TestProcesses(t *testing.T) {
	testProcesses(t, 2000)
}

// progressLine matches the load generator's first progress line, which
// says the run is under way. It is due a second after the start, but the
// time it prints is measured, and on a slow machine (the race detector
// under emulation) it is past the second.
var progressLine = regexp.MustCompile(`kv: +\d+\.\d s \d`)

// Ctrl-C reaches a server whose workers are busy polling, and a client in
// the middle of its run; the server survives a client that vanished.
func TestProcessesInterrupted(t *testing.T) {
	bin := extest.Build(t)
	addr := extest.FreeAddr(t)
	srv := startServer(t, bin, addr, nil)
	long := []string{"-client", "-addr", addr, "-clients", "2", "-window", "4", "-keys", "64", "-duration", "10m"}

	cli := extest.Start(t, "client", bin, long...)
	cli.Await(progressLine, startLimit)
	interrupted(t, cli)
	// The server sees the connection close or its responses fail first.
	srv.Await(regexp.MustCompile(`kv: session 1 ended: (the client left without saying done|worker \d+: .* failed)`), startLimit)

	cli = extest.Start(t, "client", bin, "-client", "-addr", addr, "-clients", "1", "-window", "2", "-keys", "16",
		"-requests", "100", "-duration", "0")
	out, err := cli.Wait(runLimit)
	require.NoError(t, err, "the server serves on after a client vanished:\n%s", out)

	cli = extest.Start(t, "client", bin, long...)
	cli.Await(progressLine, startLimit)
	interrupted(t, srv)
	out, err = cli.Wait(runLimit)
	assert.Equal(t, 1, extest.ExitCode(t, err), "a client whose server went away fails:\n%s", out)
}

// The one-process mode stops on Ctrl-C too.
func TestOneProcessInterrupted(t *testing.T) {
	bin := extest.Build(t)
	p := extest.Start(t, "kv", bin, "-clients", "2", "-window", "4", "-keys", "64", "-duration", "10m", "-mode", "event")
	p.Await(progressLine, startLimit)
	interrupted(t, p)
}

// A load generator whose server dies says so at once and names the
// server, with the status of a request that failed with it, not the state
// of the queue it left behind.
func TestServerKilled(t *testing.T) {
	bin := extest.Build(t)
	for _, mode := range []string{"poll", "event"} {
		t.Run(mode, func(t *testing.T) {
			addr := extest.FreeAddr(t)
			srv := startServer(t, bin, addr, nil)
			cli := extest.Start(t, "client", bin, "-client", "-addr", addr, "-clients", "2", "-window", "4", "-keys", "64",
				"-duration", "10m", "-mode", mode)
			cli.Await(progressLine, startLimit)
			require.NoError(t, srv.Signal(syscall.SIGKILL))
			killed := time.Now()
			out, err := cli.Wait(runLimit)
			assert.Less(t, time.Since(killed), 5*time.Second, "the client noticed late:\n%s", out)
			assert.Equal(t, 1, extest.ExitCode(t, err), out)
			assert.Regexp(t, `(?m)^kv: the server at `+regexp.QuoteMeta(addr)+` went away: `, out)
			assert.NotContains(t, out, "wrong state")
		})
	}
}
