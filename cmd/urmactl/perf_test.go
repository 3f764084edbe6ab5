package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// freePort returns a TCP port nobody listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// syncBuf is a bytes.Buffer a process writes while the test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// firstCore is the lowest core this process may run on, for -c.
func firstCore(t *testing.T) int {
	var set unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &set))
	for c := range len(set) * 64 {
		if set.IsSet(c) {
			return c
		}
	}
	t.Fatal("this process may run on no core")
	return -1
}

// TestPerfTwoProcesses runs urmactl perf as a server and a client process
// on loopback0: the loopback provider across two processes, as a user
// would compare it with ucx_perftest.
func TestPerfTwoProcesses(t *testing.T) {
	bin := urmactl(t)
	core := strconv.Itoa(firstCore(t))
	for _, c := range []struct {
		args []string
		row  string
	}{
		{[]string{"write_lat", "-n", "2000", "-s", "64"}, `(?m)^ 64 +2000 +(\d+\.\d\d +){9}$`},
		// The tuned loops, which the server takes from the client.
		{[]string{"write_lat", "-n", "2000", "-s", "64", "--tuned"}, `(?m)^ 64 +2000 +(\d+\.\d\d +){9}$`},
		{[]string{"atomic_lat", "-n", "2000"}, `(?m)^ 8 +2000 +(\d+\.\d\d +){9}$`},
		// Event mode: enough iterations that the first wait's one-time
		// set-up (a context watched, a waiter's bookkeeping) does not
		// count as a per-operation allocation.
		{[]string{"send_lat", "-n", "5000", "-s", "8", "-e", "--spin", "20us"}, `(?m)^ 8 +5000 +(\d+\.\d\d +){9}$`},
		{[]string{"send_lat", "-n", "5000", "-s", "8", "-e", "--cpu", core}, `(?m)^ 8 +5000 +(\d+\.\d\d +){9}$`},
		{[]string{"send_bw", "-n", "2000", "-s", "4096", "-p", "RM", "-l", "4"}, `(?m)^ 4096 +2000 +(\d+\.\d\d +){2}\d+\.\d{6} *$`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			port := freePort(t)
			var sout, serr syncBuf
			srv := exec.Command(bin, "perf", c.args[0], "--eid", "0", "--port", port)
			srv.Stdout, srv.Stderr = &sout, &serr
			require.NoError(t, srv.Start())
			done := make(chan error, 1)
			go func() { done <- srv.Wait() }()
			out, errOut, code := run(t, bin, append(append([]string{"perf"}, c.args...), "--eid", "1", "--port", port, "127.0.0.1")...)
			require.Equal(t, 0, code, "client: %s%s\nserver: %s", out, errOut, serr.String())
			assert.Regexp(t, c.row, out)
			assert.Contains(t, out, "provider loopback  device loopback0")
			if slices.Contains(c.args, "--tuned") {
				assert.Contains(t, out, " loops tuned ")
				assert.Contains(t, serr.String(), ", tuned loops")
			} else {
				assert.Contains(t, out, " loops default ")
				assert.Contains(t, serr.String(), ", default loops")
			}
			assert.Regexp(t, `heap allocations per operation: 0\.0\d\d`, out)
			select {
			case err := <-done:
				require.NoError(t, err, serr.String())
			case <-time.After(30 * time.Second):
				_ = srv.Process.Kill()
				t.Fatalf("the server did not exit after its client: %s", serr.String())
			}
			assert.Contains(t, serr.String(), "perf server: done")
		})
	}
}

func TestPerfJSONAndErrors(t *testing.T) {
	bin := urmactl(t)
	port := freePort(t)
	srv := exec.Command(bin, "perf", "read_lat", "--port", port)
	require.NoError(t, srv.Start())
	out, errOut, code := run(t, bin, "perf", "read_lat", "-n", "500", "-s", "8", "--eid", "1", "-P", port, "-o", "json", "--tuned", "127.0.0.1")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, srv.Wait())
	var rep struct {
		Test     string
		Tuned    bool `json:"tuned"`
		LockFree bool `json:"lock_free"`
		Latency  []struct {
			Bytes  int     `json:"bytes"`
			Iters  int     `json:"iterations"`
			Median float64 `json:"t_median_us"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, "read_lat", rep.Test)
	assert.True(t, rep.Tuned)
	assert.True(t, rep.LockFree)
	require.Len(t, rep.Latency, 1)
	assert.Equal(t, 8, rep.Latency[0].Bytes)
	assert.Equal(t, 500, rep.Latency[0].Iters)
	assert.Greater(t, rep.Latency[0].Median, 0.0)

	for args, want := range map[string]string{
		"perf bogus_lat":                        `unknown test "bogus_lat"`,
		"perf write_lat -p XY":                  `mode "XY"`,
		"perf write_lat -a -s 64":               "exclude each other",
		"perf write_lat -A xor":                 `atomic "xor"`,
		"perf write_lat --port 0":               "port 0",
		"perf write_lat -e 127.0.0.1":           "no event mode",
		"perf send_lat --spin 5us 127.0.0.1":    "add -e",
		"perf write_bw -l 500 1.2.3.4":          "post list 500",
		"perf send_lat -o yaml":                 `invalid output format "yaml"`,
		"perf write_lat --warmup 100 127.0.0.1": "warm-up is for bandwidth tests",
		"perf send_bw --warmup -2 127.0.0.1":    "warm-up -2 is negative",
		"perf write_lat --cpu 100000":           "cpu 100000: not one of this process's cores",
	} {
		_, errOut, code := run(t, bin, regexp.MustCompile(` +`).Split(args, -1)...)
		// A core this process may not run on is the machine's answer,
		// not a misuse of the flags: a failure, 1; the rest are usage
		// errors, 2.
		wantCode := 2
		if strings.HasPrefix(want, "cpu ") {
			wantCode = 1
		}
		assert.Equal(t, wantCode, code, args)
		assert.Contains(t, errOut, want, args)
	}
}

// A client whose server dies mid-run says so promptly and names the
// server, with the status of the first request that failed if one did,
// not the state its queue was left in ("jetty is ERROR"); with -o json
// the report carries the same error.
func TestPerfServerKilled(t *testing.T) {
	bin := urmactl(t)
	for _, args := range [][]string{
		{"write_bw", "-D", "60s"},
		{"read_bw", "-D", "60s"},
		{"send_bw", "-D", "60s", "-e"},
		{"atomic_bw", "-D", "60s"},
	} {
		t.Run(args[0], func(t *testing.T) {
			port := freePort(t)
			srv := exec.Command(bin, append(append([]string{"perf"}, args...), "--eid", "0", "--port", port)...)
			require.NoError(t, srv.Start())
			srvDone := make(chan struct{})
			go func() { _ = srv.Wait(); close(srvDone) }()
			defer func() { _ = srv.Process.Kill(); <-srvDone }()

			var out, errOut syncBuf
			cli := exec.Command(bin, append(append([]string{"perf"}, args...), "--eid", "1", "--port", port, "-o", "json", "127.0.0.1")...)
			cli.Stdout, cli.Stderr = &out, &errOut
			require.NoError(t, cli.Start())
			cliDone := make(chan error, 1)
			go func() { cliDone <- cli.Wait() }()
			defer func() { _ = cli.Process.Kill() }()

			// The first progress line: the timed run is under way.
			deadline := time.Now().Add(30 * time.Second)
			for !regexp.MustCompile(`iterations, \d+/s`).MatchString(errOut.String()) {
				require.True(t, time.Now().Before(deadline), "the run did not start: %s", errOut.String())
				time.Sleep(20 * time.Millisecond)
			}
			require.NoError(t, srv.Process.Kill())
			killed := time.Now()
			var err error
			select {
			case err = <-cliDone:
			case <-time.After(20 * time.Second):
				t.Fatalf("the client ran on 20s after its server died: %s", errOut.String())
			}
			assert.Less(t, time.Since(killed), 5*time.Second, "the client noticed late")
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, errOut.String())
			assert.Equal(t, 1, ee.ExitCode())

			msg := regexp.MustCompile(`(?m)^urmactl: (.*)$`).FindStringSubmatch(errOut.String())
			require.NotNil(t, msg, errOut.String())
			assert.Regexp(t, `^perf server 127\.0\.0\.1:`+port+` gone: `, msg[1])
			assert.NotContains(t, msg[1], "wrong state")
			var rep struct{ Error string }
			require.NoError(t, json.Unmarshal([]byte(out.String()), &rep), out.String())
			assert.Equal(t, msg[1], rep.Error)
		})
	}
}
