package cli_test

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/cmd/urmactl/internal/cli"
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
