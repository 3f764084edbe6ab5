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

// story is what a run prints, server and client lines in the order the
// client's steps make them, for a device's provider and the status its
// WRITE into a gone segment fails with.
func story(provider, dev, status string) *regexp.Regexp {
	return regexp.MustCompile(`^server: ` + provider + `/` + dev + `, eid \S+, waiting on \S+
client: ` + provider + `/` + dev + `, eid \S+, connected to \S+
client: WRITE "before the error": ok
server: finds "before the error" in its segment
server: unregistered its segment
client: WRITE into the unregistered segment: failed with ` + status + `
client: the JFS is ERROR
client: async event JFS_ERR on the JFS, acked
client: flushed nothing: no other request was queued
client: reset, the JFS is READY again
server: registered a new segment
client: WRITE "after the recovery" into the new segment: ok
server: finds "after the recovery" in its segment
$`)
}

// The client meets the remote error, recovers its JFS and goes on, in
// both completion modes.
func TestRecovers(t *testing.T) {
	for _, mode := range []string{"poll", "event"} {
		t.Run(mode, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, run(t.Context(), &b, exutil.Common{Dev: "loopback0", EID: -1, Mode: mode}), b.String())
			assert.Regexp(t, story("loopback", "loopback0", "REM_ACCESS_ABORT_ERR"), b.String())
		})
	}
}

// The same as two programs.
func TestTwoProcesses(t *testing.T) {
	bin := extest.Build(t)
	addr := extest.FreeAddr(t)
	srv := extest.Start(t, "server", bin, "-server", "-addr", addr)
	srv.Await(regexp.MustCompile(`waiting on `+regexp.QuoteMeta(addr)), 30*time.Second)
	out, err := extest.Start(t, "client", bin, "-client", "-addr", addr).Wait(time.Minute)
	require.NoError(t, err, out)
	assert.Contains(t, out, "client: reset, the JFS is READY again\n")
	assert.Contains(t, out, `client: WRITE "after the recovery" into the new segment: ok`+"\n")
	sout, err := srv.Wait(30 * time.Second)
	require.NoError(t, err, sout)
	assert.Contains(t, sout, `server: finds "after the recovery" in its segment`+"\n")
}

// Ctrl-C stops a waiting server, which frees what it made and exits 130.
func TestInterrupt(t *testing.T) {
	bin := extest.Build(t)
	srv := extest.Start(t, "server", bin, "-server", "-addr", extest.FreeAddr(t))
	srv.Await(regexp.MustCompile(`waiting on`), 30*time.Second)
	require.NoError(t, srv.Interrupt())
	out, err := srv.Wait(10 * time.Second)
	assert.Equal(t, 130, extest.ExitCode(t, err), out)
	assert.Contains(t, out, "recover: interrupted\n")
}
