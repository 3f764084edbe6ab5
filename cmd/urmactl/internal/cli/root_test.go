package cli_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/cmd/urmactl/internal/cli"
	"github.com/urma-go/sdk/internal/perf"
)

// execute runs the root command as the binary would, without a process.
func execute(t *testing.T, stdin []byte, args ...string) (string, string, error) {
	t.Helper()
	root := cli.New()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(bytes.NewReader(stdin))
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

func TestRootSegmentAndJetty(t *testing.T) {
	f := newFixture(t)
	out, errOut, err := execute(t, nil, "segment", "list", "--dir", f.dir)
	require.NoError(t, err)
	assert.Empty(t, errOut)
	assert.Len(t, rows(out), 3)

	out, _, err = execute(t, nil, "seg", "ls", "-o", "wide", "--timeout", "500ms")
	require.NoError(t, err)
	assert.Contains(t, out, "COMMAND")

	out, _, err = execute(t, nil, "jetty", "list", "-o", "json")
	require.NoError(t, err)
	assert.Contains(t, out, `"kind": "jetty"`)

	raw := marshal(t, f.jfr.Descriptor())
	out, _, err = execute(t, raw, "jetty", "decode")
	require.NoError(t, err)
	assert.Contains(t, out, "kind:         JFR\n")
	out, _, err = execute(t, []byte(hex.EncodeToString(raw)), "jetty", "decode", "-")
	require.NoError(t, err)
	assert.Contains(t, out, "kind:         JFR\n")

	for _, args := range [][]string{
		{"segment", "bogus"}, {"jetty", "bogus"}, {"segment", "ls", "extra"},
		{"segment", "decode", "00", "11"}, {"jetty", "ls", "--timeout", "soon"},
	} {
		_, _, err := execute(t, nil, args...)
		assert.Error(t, err, args)
	}
}

// An unknown flag is reported as such wherever it stands. Cobra takes the
// word after an unknown flag for its value while it looks for the
// subcommand, which made "--bogus-flag device ls" an unknown command "ls".
func TestUnknownFlag(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus-flag", "device", "ls"},
		{"device", "--bogus-flag", "ls"},
		{"device", "ls", "--bogus-flag"},
		{"--bogus-flag=1", "segment", "ls"},
		{"--bogus-flag", "perf", "write_lat"},
	} {
		out, _, err := execute(t, nil, args...)
		require.Error(t, err, args)
		assert.Equal(t, "unknown flag: --bogus-flag", err.Error(), args)
		assert.Empty(t, out, args)
	}
	_, _, err := execute(t, nil, "-x", "device", "ls")
	assert.EqualError(t, err, "unknown shorthand flag: 'x' in -x")

	// An unknown command is still one, and no command prints the help.
	_, _, err = execute(t, nil, "bogus")
	assert.EqualError(t, err, `unknown command "bogus" for "urmactl"`)
	out, _, err := execute(t, nil)
	require.NoError(t, err)
	assert.Contains(t, out, "Available Commands:")
}

// Every way of calling urmactl wrongly is a UsageError (exit 2), wherever
// the check that finds it runs; a call that is right but fails is not.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bogus"}, {"device", "bogus"}, {"--bogus"}, {"device", "ls", "-o", "yaml"},
		{"device", "show"}, {"jetty", "decode", "a", "b"}, {"perf"}, {"perf", "bogus_lat"},
		{"perf", "write_lat", "-p", "XY"}, {"perf", "write_lat", "-s", "0"}, {"perf", "write_lat", "-w", "5"},
		{"perf", "write_lat", "--port", "0"}, {"perf", "send_lat", "-o", "yaml", "127.0.0.1"},
	} {
		_, _, err := execute(t, nil, args...)
		var ue *cli.UsageError
		require.ErrorAs(t, err, &ue, args)
		assert.Equal(t, 2, cli.ExitCode(err), args)
	}
	_, _, err := execute(t, nil, "device", "show", "nope")
	require.Error(t, err)
	assert.Equal(t, 1, cli.ExitCode(err), "a device that is not there is a failure, not a usage error")
	assert.Equal(t, 0, cli.ExitCode(nil))
}

// Every command's help has examples.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		assert.NotEmpty(t, c.Example, "%s has no examples", c.CommandPath())
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cli.New())
}

// The shell completions offer test names, device names and the words of
// the enumerated flags, and cobra's completion command writes the scripts.
func TestCompletions(t *testing.T) {
	complete := func(args ...string) []string {
		out, _, err := execute(t, nil, append([]string{cobra.ShellCompRequestCmd}, args...)...)
		require.NoError(t, err, args)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.NotEmpty(t, lines, args)
		require.True(t, strings.HasPrefix(lines[len(lines)-1], ":"), "ends with the directive: %q", out)
		return lines[:len(lines)-1]
	}
	assert.Equal(t, perf.Tests(), complete("perf", ""))
	assert.Equal(t, []string{"RM", "RC", "UM"}, complete("perf", "write_lat", "-p", ""))
	assert.Equal(t, []string{"cas", "faa"}, complete("perf", "atomic_lat", "--atomic", ""))
	assert.Contains(t, complete("perf", "write_lat", "-d", ""), "loopback0")
	assert.Contains(t, complete("device", "show", ""), "loopback0")
	assert.Empty(t, complete("device", "show", "loopback0", ""), "show takes one device")
	for _, cmd := range [][]string{{"device", "ls"}, {"segment", "ls"}, {"jetty", "decode"}, {"perf", "send_bw"}} {
		assert.Equal(t, []string{"table", "wide", "json"}, complete(append(cmd, "-o", "")...), cmd)
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		out, _, err := execute(t, nil, "completion", sh)
		require.NoError(t, err, sh)
		assert.Contains(t, out, "urmactl", sh)
	}
}
