package loopback_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
)

// TestJFCEStaysOutOfTheRuntimePoller checks that a JFCE's eventfd is in no
// epoll set of this process. In the runtime's poller, every event would
// wake the poller's thread as well as the sleeper, a second thread woken
// per message across processes (bench/event-wake). A pipe from os.Pipe
// is in the poller's set: the scan must find it, or it proves nothing.
func TestJFCEStaysOutOfTheRuntimePoller(t *testing.T) {
	p := newPair(t)
	ce, err := jetty.NewJFCE(p.b)
	require.NoError(t, err)
	defer ce.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()

	watched := epollTargets(t)
	assert.Contains(t, watched, int(r.Fd()), "the runtime poller's set, found through /proc/self/fdinfo")
	assert.NotContains(t, watched, loopback.JFCEDescriptor(ce.Raw()), "a JFCE's eventfd")
}

// epollTargets lists the descriptors that the epoll instances of this
// process watch ("tfd:" lines of their fdinfo).
func epollTargets(t *testing.T) []int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var out []int
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil || link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd.Name()))
		if err != nil {
			continue // closed since the listing
		}
		for _, line := range strings.Split(string(info), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "tfd:" {
				n, err := strconv.Atoi(f[1])
				require.NoError(t, err, line)
				out = append(out, n)
			}
		}
	}
	return out
}
