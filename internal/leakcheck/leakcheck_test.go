package leakcheck

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/internal/live"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestCleanRunPasses(t *testing.T) {
	before := Take()
	done := make(chan struct{})
	go func() { <-done }()
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	close(done)
	require.NoError(t, f.Close())
	assert.NoError(t, Check(before, 5*time.Second), "what went away in time is no leak")
}

func TestFindsEachKindOfLeak(t *testing.T) {
	before := Take()
	stop := make(chan struct{})
	go func() { <-stop }()
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	live.Contexts(1)
	live.Objects(2)

	err = Check(before, 100*time.Millisecond)
	require.Error(t, err)
	for _, want := range []string{"goroutine", "file descriptor", "/proc/", "child process", "sleep",
		"1 provider context(s)", "2 provider object(s)"} {
		assert.Contains(t, err.Error(), want)
	}

	close(stop)
	f.Close()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	live.Contexts(-1)
	live.Objects(-2)
	assert.NoError(t, Check(before, 5*time.Second))
}

func TestSharedMappingsSeen(t *testing.T) {
	// A memfd named as loopback names its memory, mapped shared.
	before := Take()
	unmap := mapMemfd(t, "urma-leakcheck-test")
	err := Check(before, 100*time.Millisecond)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "shared mapping"), err.Error())
	unmap()
	assert.NoError(t, Check(before, 5*time.Second))
}
