package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/cmd/urmactl/internal/cli"
)

// A perf flag whose value the run would not honour is refused with what
// to give instead, never replaced: atomics are 8 bytes, and a zero that
// stands for the test's default when the flag is left out is not a value
// to run. Each is refused before anything is opened or dialled.
func TestPerfRefusesWhatItWouldReplace(t *testing.T) {
	for args, want := range map[string]string{
		"atomic_lat -s 16":      "size 16: atomic_lat moves 8 bytes, the size of an atomic operand (leave -s out or give -s 8)",
		"atomic_bw -s 4":        "size 4: atomic_bw moves 8 bytes",
		"atomic_lat -a":         "-a runs every size from 2 to 8388608 bytes; atomic_lat moves 8 bytes only (leave -a out)",
		"atomic_lat -s 0":       "-s 0: want at least 1 byte (leave -s out for the test's default)",
		"write_lat -s 0":        "-s 0: want at least 1 byte (leave -s out for the test's default)",
		"write_bw -n 0":         "-n 0: want at least 1 iteration (leave -n out for the test's default)",
		"write_bw -D 0":         "-D 0s: want a positive duration (leave -D out to run a count of iterations)",
		"write_bw -T 0":         "-T 0: want a depth of at least 1",
		"send_bw -R 0":          "-R 0: want a depth of at least 1",
		"write_bw -l 0":         "-l 0: want at least 1 request per post",
		"write_bw -Q 0":         "-Q 0: want 1 (signal every request) or more",
		"write_bw -n 500 -D 1s": "-n and -D exclude each other",
		"write_lat -A cas":      "-A cas chooses the operation of the atomic tests; write_lat has none",
	} {
		for _, side := range []string{"", " 127.0.0.1"} { // server and client
			err := executePerf(t, strings.Fields("perf "+args+side+" --port "+freePort(t))...)
			require.Error(t, err, args+side)
			assert.Contains(t, err.Error(), want, args+side)
		}
	}
}

// executePerf runs a perf command that should be refused before it
// starts; one that is not is stopped after a few seconds, so that the
// test fails rather than waiting for a peer forever.
func executePerf(t *testing.T, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	root := cli.New()
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// freePort returns a TCP port nobody listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// A client asked for JSON writes a JSON report when it fails too, with
// the error, and still fails: a script reading stdout gets a document,
// and the exit status says what happened.
func TestPerfJSONReportsFailure(t *testing.T) {
	for args, want := range map[string]string{
		// Refused by the flags, before anything runs.
		"perf write_lat -s 0 -o json 127.0.0.1": "-s 0: want at least 1 byte",
		// Refused by the device, once the run starts.
		"perf write_lat -I 1048576 -o json --port 1 127.0.0.1": "inline 1048576",
	} {
		out, _, err := execute(t, nil, strings.Fields(args)...)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), want, args)
		var rep struct {
			Test   string `json:"test"`
			Device string `json:"device"`
			Error  string `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &rep), "%s: %q", args, out)
		assert.Equal(t, "write_lat", rep.Test)
		assert.Equal(t, "loopback0", rep.Device)
		assert.Equal(t, err.Error(), rep.Error)
	}

	// The table output and the server print no JSON.
	out, _, err := execute(t, nil, "perf", "write_lat", "-s", "0", "127.0.0.1")
	require.Error(t, err)
	assert.Empty(t, out)
	out, _, err = execute(t, nil, "perf", "write_lat", "-s", "0", "-o", "json")
	require.Error(t, err)
	assert.Empty(t, out)
}
