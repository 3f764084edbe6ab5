package main

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
	"github.com/urma-go/sdk/examples/internal/exutil"
)

// transcript is what a one-process run prints for a POST of size bytes.
func transcript(size int) *regexp.Regexp {
	return regexp.MustCompile(`^server: loopback/loopback0, listening on (127\.0\.0\.1:\d+)
client: loopback/loopback0, eid ::ffff:127\.0\.0\.2, dialling 127\.0\.0\.1:\d+
client: GET /hello: 200 OK "hello over urma from 127\.0\.0\.2:0"
client: POST /sum \(` + strconv.Itoa(size) + ` bytes\): 200 OK "` + strconv.Itoa(size) + ` bytes, sha256 [0-9a-f]{64}", matches
$`)
}

// Both sides in one process, with bodies from empty to many slots of a
// connection (urmanet.SlotSize).
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		poll bool
	}{{"empty", 0, false}, {"one slot", 100, false}, {"1MiB", 1 << 20, false}, {"1MiB poll", 1 << 20, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			cfg := config{Net: exutil.Net{Dev: "loopback0", EID: -1, Addr: ":0", Poll: tc.poll}, size: tc.size}
			require.NoError(t, run(t.Context(), &b, cfg), b.String())
			assert.Regexp(t, transcript(tc.size), b.String())
		})
	}
}

func TestRunErrors(t *testing.T) {
	var b bytes.Buffer
	err := run(t.Context(), &b, config{Net: exutil.Net{Dev: "nope", EID: -1, Addr: ":0"}})
	assert.ErrorContains(t, err, `no device named "nope"`)
	err = run(t.Context(), &b, config{Net: exutil.Net{Dev: "loopback0", EID: -1, Addr: "127.0.0.1:1", Client: true}})
	assert.ErrorContains(t, err, "publishes port 1")
	for _, cfg := range []config{
		{Net: exutil.Net{Addr: ":0", Server: true, Client: true}},
		{Net: exutil.Net{Addr: "7480"}},
		{Net: exutil.Net{Addr: ":65536"}},
		{Net: exutil.Net{Addr: ":0", Client: true}},
		{Net: exutil.Net{Addr: "not-an-eid:1"}},
		{Net: exutil.Net{Addr: ":1"}, size: -1},
	} {
		assert.Error(t, cfg.validate(), "%+v", cfg)
	}
}

// The same as two programs: the client finds the server by its urmanet
// address alone.
func TestTwoProcesses(t *testing.T) {
	bin := extest.Build(t)
	srv := extest.Start(t, "server", bin, "-server", "-addr", ":0")
	addr := srv.Await(regexp.MustCompile(`listening on (\S+)\n`), 30*time.Second)[1]
	out, err := extest.Start(t, "client", bin, "-client", "-addr", addr, "-size", "100000").Wait(time.Minute)
	require.NoError(t, err, out)
	assert.Regexp(t, `client: GET /hello: 200 OK "hello over urma from 127\.0\.0\.1:0"\n`, out)
	assert.Regexp(t, `client: POST /sum \(100000 bytes\): 200 OK "100000 bytes, sha256 [0-9a-f]{64}", matches\n$`, out)

	// Ctrl-C stops the server, which shuts down and exits 130.
	require.NoError(t, srv.Interrupt())
	sout, err := srv.Wait(10 * time.Second)
	assert.Equal(t, exutil.ExitInterrupted, extest.ExitCode(t, err), sout)
	assert.Contains(t, sout, "http: interrupted\n")
}

// The program's exit codes: 0 for a run, 2 for a usage error, 1 for a
// failure.
func TestGoRun(t *testing.T) {
	bin := extest.Build(t)
	out, err := extest.Start(t, "both", bin, "-addr", ":0").Wait(time.Minute)
	require.NoError(t, err, out)
	assert.Regexp(t, transcript(1<<20), out)

	out, err = extest.Start(t, "usage", bin, "-server", "-client").Wait(time.Minute)
	assert.Equal(t, 2, extest.ExitCode(t, err), out)
	assert.Contains(t, out, "exclude each other")

	out, err = extest.Start(t, "nothing there", bin, "-client", "-addr", "127.0.0.1:1").Wait(time.Minute)
	assert.Equal(t, 1, extest.ExitCode(t, err), out)
	assert.Contains(t, out, "publishes port 1")
}
