package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
)

var dialLine = regexp.MustCompile(`go run ./examples/quickstart dial ([0-9a-f]+)\n`)

// TestTwoProcesses runs the README's quickstart as a user does: the
// server in one process, the client in another with the server's line.
func TestTwoProcesses(t *testing.T) {
	bin := extest.Build(t)
	srv := extest.Start(t, "server", bin, "serve")
	m := srv.Await(dialLine, 30*time.Second)
	cli := extest.Start(t, "client", bin, "dial", m[1])

	out, err := cli.Wait(30 * time.Second)
	require.NoError(t, err, out)
	assert.Equal(t, "client: WRITE and SEND completed\n", out)
	out, err = srv.Wait(30 * time.Second)
	require.NoError(t, err, out)
	assert.Equal(t, m[0]+"segment holds \"written by the client's WRITE\"\nreceived \"hello from the client\"\n", out)
}

func TestBadArguments(t *testing.T) {
	bin := extest.Build(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "usage: quickstart serve | quickstart dial HEX"},
		{[]string{"dial"}, 2, "usage:"},
		{[]string{"serve", "extra"}, 2, "usage:"},
		{[]string{"dial", "zz"}, 1, "quickstart: encoding/hex: invalid byte"},
		{[]string{"dial", "0102"}, 1, "quickstart: bootstrap: not a bundle"},
		{[]string{"dial", strings.Repeat("00", 48+32)}, 1, "quickstart: bootstrap: not a bundle"},
	} {
		p := extest.Start(t, "quickstart", bin, tc.args...)
		out, err := p.Wait(30 * time.Second)
		assert.Equal(t, tc.code, extest.ExitCode(t, err), "args %q: %s", tc.args, out)
		assert.Contains(t, out, tc.msg, "args %q", tc.args)
	}
}

// TestReadmeShowsThisProgram keeps the README's quickstart block equal to
// this program's serve and dial functions, so that it cannot drift.
func TestReadmeShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)```go\n(func serve.*?)```\n").FindSubmatch(readme)
	require.NotNil(t, block, "README.md has no ```go block starting with func serve")
	assert.Contains(t, string(src), string(block[1]), "README.md's quickstart block differs from examples/quickstart/main.go")
}
