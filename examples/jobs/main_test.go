package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
	"github.com/urma-go/sdk/examples/internal/exutil"
)

// wantJobs are the lines of every job of a run, in order: what the client
// did and what the server saw.
var wantJobs = []string{
	`job receive:              ok: received 25 B "a message from the server"; the server sent 25 B`,
	`job send:                 ok: sent 25 B; the server received 25 B "a message from the client"`,
	`job send with immediate:  ok: sent 25 B; the server received 25 B "a message from the client" with immediate 0x5e4d`,
	`job write:                ok: wrote 21 B; the server finds "written by the client" in its segment`,
	`job write with immediate: ok: wrote 21 B; the server took a receive for immediate 0x3a7e and finds "written by the client" in its segment`,
	`job read:                 ok: read "the server's bytes, read by the client"; the server did nothing: a READ takes no part of its CPU`,
	`job compare and swap:     ok: compared with 0, swapped in 42: the word was 0; the server finds its word at 42`,
	`job fetch and add:        ok: added 8: the word was 42; the server finds its word at 50`,
}

// jobLines returns the job lines of an output.
func jobLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "job ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// Every job runs, in order, in both completion modes, and moves what it
// should: each side's view is checked.
func TestEveryJob(t *testing.T) {
	for _, mode := range []string{"poll", "event"} {
		t.Run(mode, func(t *testing.T) {
			var b bytes.Buffer
			cfg := config{Common: exutil.Common{Dev: "loopback0", EID: -1, Mode: mode}}
			require.NoError(t, run(t.Context(), &b, cfg), b.String())
			assert.Equal(t, wantJobs, jobLines(b.String()), b.String())
			assert.Regexp(t, `(?m)^server: loopback/loopback0, eid ::ffff:127\.0\.0\.1, waiting on 127\.0\.0\.1:\d+$`, b.String())
			assert.Regexp(t, `(?m)^client: loopback/loopback0, eid ::ffff:127\.0\.0\.2, connected to 127\.0\.0\.1:\d+, RM$`, b.String())
		})
	}
}

// With -um the message jobs travel as UM datagrams, and only they run.
func TestUMDatagrams(t *testing.T) {
	var b bytes.Buffer
	cfg := config{Common: exutil.Common{Dev: "loopback0", EID: -1, Mode: "poll"}, um: true}
	require.NoError(t, run(t.Context(), &b, cfg), b.String())
	assert.Equal(t, wantJobs[:3], jobLines(b.String()), b.String())
	assert.Regexp(t, `(?m), UM datagrams$`, b.String())
}

// A chosen job runs alone; the atomics see the word each leaves behind.
func TestChosenJobs(t *testing.T) {
	for _, tc := range []struct {
		jobs []string
		want []string
	}{
		{[]string{"fadd"}, []string{`job fetch and add:        ok: added 8: the word was 0; the server finds its word at 8`}},
		{[]string{"fadd", "cas"}, []string{
			`job fetch and add:        ok: added 8: the word was 0; the server finds its word at 8`,
			// The word is 8, not 0: the compare fails and nothing is swapped.
			`job compare and swap:     ok: compared with 0, swapped in 42: the word was 8; the server finds its word at 8`,
		}},
		{[]string{"write-imm", "recv"}, []string{wantJobs[4], wantJobs[0]}},
	} {
		t.Run(strings.Join(tc.jobs, ","), func(t *testing.T) {
			var b bytes.Buffer
			cfg := config{Common: exutil.Common{Dev: "loopback0", EID: -1, Mode: "poll"}, jobs: tc.jobs}
			require.NoError(t, run(t.Context(), &b, cfg), b.String())
			assert.Equal(t, tc.want, jobLines(b.String()))
		})
	}
}

// The server and the client as two programs, as a user runs them in two
// terminals.
func TestTwoProcesses(t *testing.T) {
	bin := extest.Build(t)
	addr := extest.FreeAddr(t)
	srv := extest.Start(t, "server", bin, "-server", "-addr", addr)
	srv.Await(regexp.MustCompile(`waiting on `+regexp.QuoteMeta(addr)), 30*time.Second)
	cli := extest.Start(t, "client", bin, "-client", "-addr", addr)
	out, err := cli.Wait(time.Minute)
	require.NoError(t, err, out)
	assert.Equal(t, wantJobs, jobLines(out))
	sout, err := srv.Wait(30 * time.Second)
	require.NoError(t, err, sout)
}

// A client without a server, and bad flags, are errors, not hangs.
func TestErrors(t *testing.T) {
	bin := extest.Build(t)
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"-client", "-addr", extest.FreeAddr(t), "-read"}, "yet (dial tcp", 1},
		{[]string{"-mode", "spin"}, `-mode "spin": want poll or event`, 2},
		{[]string{"-server", "-client"}, "exclude each other", 2},
		{[]string{"send"}, `unexpected argument "send" (the jobs are flags`, 2},
		{[]string{"-um", "-cas"}, "-cas with -um: UM carries messages only", 2},
		{[]string{"-dev", "nosuch"}, `no device named "nosuch"`, 1},
	} {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			out, err := extest.Start(t, "jobs", bin, tc.args...).Wait(time.Minute)
			require.Error(t, err, out)
			assert.Contains(t, out, tc.want)
			if tc.args[0] == "-client" {
				assert.Contains(t, out, "connect to the server at", "and then gives up")
			}
			assert.Equal(t, tc.code, extest.ExitCode(t, err), out)
		})
	}
}

// Ctrl-C stops a waiting server: it frees what it made, says so and exits
// 130.
func TestInterrupt(t *testing.T) {
	bin := extest.Build(t)
	srv := extest.Start(t, "server", bin, "-server", "-addr", extest.FreeAddr(t))
	srv.Await(regexp.MustCompile(`waiting on`), 30*time.Second)
	require.NoError(t, srv.Interrupt())
	out, err := srv.Wait(10 * time.Second)
	assert.Equal(t, 130, extest.ExitCode(t, err), out)
	assert.Contains(t, out, "jobs: interrupted\n")
}
