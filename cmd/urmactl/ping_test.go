package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider/loopback"
)

// urmactl ping between processes: one answers on 127.0.0.2 (ping -l),
// another pings it; the statuses are iputils ping's, and Ctrl-C ends
// either side with 130.
func TestPingBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := urmactl(t)
	dir := filepath.Join(socketDir(t), "rt")
	env := []string{loopback.EnvRuntimeDir + "=" + dir}

	listen := exec.Command(bin, "ping", "-l", "--eid", "1")
	listen.Env = append(os.Environ(), env...)
	stdout, err := listen.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, listen.Start())
	t.Cleanup(func() { _ = listen.Process.Kill(); _ = listen.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, "answering urma pings to 127.0.0.2 on loopback0")

	out, errOut, code := runWith(t, bin, env, nil, "ping", "-c", "3", "-i", "0.01", "127.0.0.2")
	require.Equal(t, 0, code, "%s%s", out, errOut)
	assert.Equal(t, 3, strings.Count(out, " bytes from 127.0.0.2: seq="), out)
	assert.Contains(t, out, "3 packets transmitted, 3 received, 0% packet loss")
	assert.Contains(t, out, "rtt min/avg/max/mdev = ")
	t.Logf("\n%s", out)

	start := time.Now()
	out, errOut, code = runWith(t, bin, env, nil, "ping", "-c", "3", "127.0.0.9")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, errOut, "no context at eid")
	assert.Less(t, time.Since(start), 5*time.Second)

	_, errOut, code = runWith(t, bin, env, nil, "ping", "-c", "x", "127.0.0.2")
	assert.Equal(t, 2, code, errOut)

	// Ctrl-C prints the statistics and exits 130.
	var pout bytes.Buffer
	ping := exec.Command(bin, "ping", "-i", "0.01", "127.0.0.2")
	ping.Env = append(os.Environ(), env...)
	ping.Stdout = &pout
	require.NoError(t, ping.Start())
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, ping.Process.Signal(syscall.SIGINT))
	err = ping.Wait()
	require.Error(t, err)
	assert.Equal(t, 130, ping.ProcessState.ExitCode(), pout.String())
	assert.Contains(t, pout.String(), "--- 127.0.0.2 urma ping statistics ---")

	require.NoError(t, listen.Process.Signal(syscall.SIGINT))
	_ = listen.Wait()
	assert.Equal(t, 130, listen.ProcessState.ExitCode())
}
