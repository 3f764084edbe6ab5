package main

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
	"github.com/urma-go/sdk/examples/internal/exutil"
)

// transcript is what a one-process run on loopback0 prints.
var transcript = regexp.MustCompile(`^server: loopback/loopback0, listening on (127\.0\.0\.1:\d+)
client: loopback/loopback0, eid ::ffff:127\.0\.0\.2, dialling 127\.0\.0\.1:\d+
client: health: SERVING
client: Echo: "hello \(from urma 127\.0\.0\.2:0\)"
client: Chat: 4 messages \(1115113 bytes\) sent, all echoed back
$`)

// Both sides in one process, with connections that sleep between
// messages and with connections that poll.
func TestRun(t *testing.T) {
	for _, poll := range []bool{false, true} {
		var b bytes.Buffer
		require.NoError(t, run(t.Context(), &b, exutil.Net{Dev: "loopback0", EID: -1, Addr: ":0", Poll: poll}), b.String())
		assert.Regexp(t, transcript, b.String(), "poll %v", poll)
	}
}

func TestRunErrors(t *testing.T) {
	var b bytes.Buffer
	err := run(t.Context(), &b, exutil.Net{Dev: "nope", EID: -1, Addr: ":0"})
	assert.ErrorContains(t, err, `no device named "nope"`)
	// gRPC dials lazily: the first call fails, with urmanet's error.
	err = run(t.Context(), &b, exutil.Net{Dev: "loopback0", EID: -1, Addr: "127.0.0.1:1", Client: true})
	assert.ErrorContains(t, err, "publishes port 1")
}

// The same as two programs, and Ctrl-C stopping the server.
func TestTwoProcesses(t *testing.T) {
	bin := extest.Build(t)
	srv := extest.Start(t, "server", bin, "-server", "-addr", ":0")
	addr := srv.Await(regexp.MustCompile(`listening on (\S+)\n`), time.Minute)[1]
	out, err := extest.Start(t, "client", bin, "-client", "-addr", addr).Wait(time.Minute)
	require.NoError(t, err, out)
	assert.Regexp(t, `client: health: SERVING
client: Echo: "hello \(from urma 127\.0\.0\.1:0\)"
client: Chat: 4 messages \(1115113 bytes\) sent, all echoed back
$`, out)

	require.NoError(t, srv.Interrupt())
	sout, err := srv.Wait(15 * time.Second)
	assert.Equal(t, exutil.ExitInterrupted, extest.ExitCode(t, err), sout)
	assert.Contains(t, sout, "grpc: interrupted\n")
}

// The program's exit codes: 0 for a run, 2 for a usage error, 1 for a
// failure.
func TestGoRun(t *testing.T) {
	bin := extest.Build(t)
	out, err := extest.Start(t, "both", bin, "-addr", ":0").Wait(time.Minute)
	require.NoError(t, err, out)
	assert.Regexp(t, transcript, out)

	out, err = extest.Start(t, "usage", bin, "-addr", "7481").Wait(time.Minute)
	assert.Equal(t, 2, extest.ExitCode(t, err), out)
	assert.Contains(t, out, `-addr "7481"`)

	out, err = extest.Start(t, "nothing there", bin, "-client", "-addr", "127.0.0.1:1").Wait(time.Minute)
	assert.Equal(t, 1, extest.ExitCode(t, err), out)
	assert.Contains(t, out, "publishes port 1")
}
