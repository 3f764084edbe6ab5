package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/internal/leakcheck"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildOut  []byte
	buildErr  error
)

func TestMain(m *testing.M) {
	code := leakcheck.Main(m)
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// urmactl builds the real binary once per test run and returns its path.
func urmactl(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "urmactl-test")
		if buildErr == nil {
			buildOut, buildErr = exec.Command("go", "build", "-o", filepath.Join(buildDir, "urmactl"), ".").CombinedOutput()
		}
	})
	require.NoError(t, buildErr, "go build: %s", buildOut)
	return filepath.Join(buildDir, "urmactl")
}

// run executes the binary and returns stdout, stderr and the exit code.
func run(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	return runWith(t, bin, nil, nil, args...)
}

// runWith is run with extra environment variables and stdin.
func runWith(t *testing.T, bin string, env []string, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return stdout.String(), stderr.String(), code
}

func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := urmactl(t)

	t.Run("ls", func(t *testing.T) {
		for _, args := range [][]string{{"device", "ls"}, {"device", "list"}, {"device", "ls", "-o", "table"}} {
			out, errOut, code := run(t, bin, args...)
			require.Equal(t, 0, code, errOut)
			assert.Equal(t, ""+
				"NAME       PROVIDER  TRANSPORT  EIDS  PORTS  STATE\n"+
				"loopback0  loopback  loopback   4     1      ACTIVE\n", out)
			assert.Empty(t, errOut)
		}
	})

	t.Run("ls wide", func(t *testing.T) {
		out, _, code := run(t, bin, "device", "ls", "-o", "wide")
		require.Equal(t, 0, code)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, 2)
		assert.Equal(t, []string{"NAME", "PROVIDER", "TRANSPORT", "EIDS", "PORTS", "STATE", "MAX_MSG", "ATOMICS", "MODES"},
			strings.Fields(lines[0]))
		assert.Equal(t, []string{"loopback0", "loopback", "loopback", "4", "1", "ACTIVE", "1073741824",
			"CAS,SWAP,FADD,FSUB,FAND,FOR,FXOR", "RM,RC,UM"}, strings.Fields(lines[1]))
	})

	t.Run("ls json", func(t *testing.T) {
		out, _, code := run(t, bin, "device", "ls", "-o", "json")
		require.Equal(t, 0, code)
		var devs []map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &devs))
		require.Len(t, devs, 1)
		assert.Equal(t, "loopback0", devs[0]["name"])
		assert.Equal(t, "loopback", devs[0]["provider"])
		assert.Len(t, devs[0]["eids"], 4)
	})

	t.Run("show", func(t *testing.T) {
		out, errOut, code := run(t, bin, "device", "show", "loopback0")
		require.Equal(t, 0, code, errOut)
		for _, want := range []string{
			"name:             loopback0\n", "transport:        loopback\n", "max_jfs_depth:    32768\n",
			"max_jfs_sge:      16\n", "max_inline:       1024\n", "max_msg_size:     1073741824\n",
			"atomic_ops:       CAS,SWAP,FADD,FSUB,FAND,FOR,FXOR\n", "atomic_size:      8\n",
			"modes:            RM,RC,UM\n", "max_eids:         4\n", "max_um_msg_size:  1073741824\n", "rnr:              true\n",
			"views:            software\n", "sig_offload:      false\n",
			"rx_threshold:     true\n", "error_suspend:    true\n", "err_timeout:      false\n", "order_cap:        OT,OI,OL,NO\n",
			"PORT  STATE   MTU   SPEED\n1     ACTIVE  4096  -\n",
			"INDEX  EID\n0      ::ffff:127.0.0.1\n1      ::ffff:127.0.0.2\n2      ::ffff:127.0.0.3\n3      ::ffff:127.0.0.4\n",
		} {
			assert.Contains(t, out, want)
		}
	})

	t.Run("show json", func(t *testing.T) {
		out, _, code := run(t, bin, "device", "show", "loopback0", "-o", "json")
		require.Equal(t, 0, code)
		var dev map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &dev))
		assert.Equal(t, "loopback0", dev["name"])
		assert.Equal(t, 32768.0, dev["max_jfc_depth"])
		assert.Equal(t, []any{"RM", "RC", "UM"}, dev["modes"])
		assert.Equal(t, []any{map[string]any{"port": 1.0, "state": "ACTIVE", "mtu": 4096.0, "speed_mbps": 0.0}}, dev["ports"])
		assert.Equal(t, map[string]any{"index": 3.0, "eid": "::ffff:127.0.0.4"}, dev["eids"].([]any)[3])
	})

	t.Run("unknown device", func(t *testing.T) {
		out, errOut, code := run(t, bin, "device", "show", "nope")
		assert.Equal(t, 1, code)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "urmactl: urma: find device: no device named \"nope\"; devices: loopback0; skipped: provider ib (")
		assert.True(t, strings.HasSuffix(errOut, ": not found (see urmactl device ls)\n"), errOut)
	})

	t.Run("bad output", func(t *testing.T) {
		for _, args := range [][]string{{"device", "ls", "-o", "yaml"}, {"device", "show", "loopback0", "-o", "yaml"}} {
			out, errOut, code := run(t, bin, args...)
			assert.Equal(t, 2, code, "a usage error")
			assert.Empty(t, out)
			assert.Equal(t, "urmactl: invalid output format \"yaml\" (want table|wide|json)\n", errOut)
		}
	})

	t.Run("usage errors exit 2", func(t *testing.T) {
		for _, args := range [][]string{
			{"device", "bogus"}, {"bogus"}, {"device", "ls", "--bogus"}, {"device", "show"},
			{"device", "show", "a", "b"}, {"segment", "ls", "extra"}, {"perf"}, {"perf", "write_lat", "-Z"},
		} {
			out, errOut, code := run(t, bin, args...)
			assert.Equal(t, 2, code, args)
			assert.Empty(t, out, args)
			assert.True(t, strings.HasPrefix(errOut, "urmactl: "), "%v: %q", args, errOut)
		}
	})

	t.Run("version", func(t *testing.T) {
		out, errOut, code := run(t, bin, "--version")
		require.Equal(t, 0, code, errOut)
		assert.Regexp(t, `^urmactl version \S+.*, go1\.\S+ `+runtime.GOOS+`/`+runtime.GOARCH+`\n$`, out)
	})
}
