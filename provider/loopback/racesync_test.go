//go:build race

package loopback_test

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
)

// recvIntoGoMemory sends 8 bytes into a receive buffer of registered Go
// memory and leaves the delivery to the provider's own goroutines (nobody
// polls for a while, so the sender's inbox timer delivers it). With racy,
// the buffer is read before its record is polled, a real race.
func recvIntoGoMemory(t *testing.T, racy bool) {
	p := newPair(t)
	buf := make([]byte, 64)
	reg, err := segment.Register(p.b, buf, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	copy(p.src.Bytes(), "first...second..")
	require.NoError(t, p.jfr.Recv(reg.SGE(0, 32), 1))
	require.NoError(t, p.jfr.Recv(reg.SGE(32, 32), 2))
	// A sender with nothing outstanding delivers its first SEND itself;
	// the second waits in the receiver's inbox for a delivery by another
	// goroutine.
	require.NoError(t, p.jfs.Send(p.remote, p.src.SGE(0, 8), 0, 1))
	require.NoError(t, p.jfs.Send(p.remote, p.src.SGE(8, 8), 0, 2))
	second := buf[32:40]
	if racy {
		// Watch the buffer itself: the first read that sees the bytes
		// races with their write, which nothing has ordered yet.
		for deadline := time.Now().Add(10 * time.Second); second[0] == 0; runtime.Gosched() {
			require.True(t, time.Now().Before(deadline), "the message never arrived")
		}
	} else {
		// The sender's inbox timer delivers meanwhile. A spin, not a
		// sleep: the runtime's timers that wake a sleeper can order the
		// timer's writes before the wake-up, and hide a missing edge.
		for start := time.Now(); time.Since(start) < 20*time.Millisecond; {
			runtime.Gosched()
		}
	}
	crs := make([]jetty.CR, 2)
	got := 0
	for deadline := time.Now().Add(10 * time.Second); got < 2; {
		n, err := p.jfcB.Poll(crs[got:])
		require.NoError(t, err)
		got += n
		require.True(t, time.Now().Before(deadline), "%d of 2 receive records", got)
	}
	for _, cr := range crs {
		require.NoError(t, cr.Err())
	}
	require.Equal(t, "first...", string(buf[:8]))
	require.Equal(t, "second..", string(second))
	p.pollOne(t, p.jfcA)
	p.pollOne(t, p.jfcA)
	require.NoError(t, reg.Unregister())
}

// TestRaceSeesRecordOrder: a buffer read after its receive record was
// polled is ordered after the provider's write into it, and the race
// detector sees that, though the record travels through atomics in shared
// memory, which the detector ignores.
func TestRaceSeesRecordOrder(t *testing.T) {
	for range 10 {
		recvIntoGoMemory(t, false)
	}
}

// TestRaceReportsEarlyRead runs the same with the buffer read before the
// record is polled, in a child process: the detector must report it.
func TestRaceReportsEarlyRead(t *testing.T) {
	if os.Getenv("URMA_RACY_CHILD") == "1" {
		recvIntoGoMemory(t, true)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestRaceReportsEarlyRead$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "URMA_RACY_CHILD=1", "URMA_LEAKCHECK=off")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the racy read passed unreported:\n%s", out)
	require.True(t, strings.Contains(string(out), "WARNING: DATA RACE"), "no race report:\n%s", out)
	require.Contains(t, string(out), "recvIntoGoMemory", "the report names another race:\n%s", out)
}
