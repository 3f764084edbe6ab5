package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var summary = regexp.MustCompile(`^pingpong: loopback/loopback0, server ::ffff:127\.0\.0\.1, client ::ffff:127\.0\.0\.2, RM, (poll|event) mode
write/read: (\d+) bytes ok
messages: (\d+) \((\d+) round trips of (\d+) bytes\), bytes: (\d+)
average round trip: \d+\.\d\d µs
$`)

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   config
		lines []string
	}{
		{"poll", config{dev: "loopback0", count: 50, size: 64}, []string{"poll", "64", "100", "50", "64", "6400"}},
		{"event", config{dev: "loopback0", count: 50, size: 64, event: true}, []string{"event", "64", "100", "50", "64", "6400"}},
		{"tiny", config{dev: "loopback0", count: 5, size: 1}, []string{"poll", "1", "10", "5", "1", "10"}},
		{"big", config{provider: "loopback", dev: "loopback0", count: 5, size: 1 << 16}, []string{"poll", "65536", "10", "5", "65536", "655360"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			res, err := run(&b, tc.cfg)
			require.NoError(t, err)
			m := summary.FindStringSubmatch(b.String())
			require.NotNil(t, m, "output:\n%s", b.String())
			assert.Equal(t, tc.lines, m[1:])
			assert.Equal(t, 2*tc.cfg.count, res.messages)
			assert.Positive(t, res.elapsed)
		})
	}
}

func TestRunErrors(t *testing.T) {
	var b bytes.Buffer
	_, err := run(&b, config{dev: "nope", count: 1, size: 1})
	assert.ErrorContains(t, err, `no device named "nope"`)
	_, err = run(&b, config{provider: "nope", dev: "loopback0", count: 1, size: 1})
	assert.ErrorContains(t, err, "forgotten import?")
	_, err = run(&b, config{dev: "loopback0", count: 0, size: 1})
	assert.Error(t, err)
	assert.Empty(t, b.String())
}

// TestGoRun runs the example the way the README says.
func TestGoRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example")
	}
	out, err := exec.Command("go", "run", ".", "-count", "20", "-size", "32", "-mode", "event").CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := summary.FindStringSubmatch(string(out))
	require.NotNil(t, m, "output:\n%s", out)
	assert.Equal(t, []string{"event", "32", "40", "20", "32", "1280"}, m[1:])

	out, err = exec.Command("go", "run", ".", "-mode", "busy").CombinedOutput()
	require.Error(t, err)
	assert.True(t, strings.Contains(string(out), `-mode "busy"`), "%s", out)
}
