package stress

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/test/vm"
)

// TestSoak runs the mixed workload between this process and a child for
// -soak (see length_test.go): every READ-back, message and atomic result is
// checked, and no request may fail.
func TestSoak(t *testing.T) {
	privateRunDir(t)
	cfg := Config{Workers: 4}
	soak(t, cfg, *soakFor)
}

func soak(t *testing.T, cfg Config, d time.Duration) {
	c := startChild(t, childSpec{Config: cfg, Duration: d})
	defer c.out.f.Close()
	n, err := Open(cfg, c.stdin)
	require.NoError(t, err)
	defer n.Close()

	var mu sync.Mutex
	var peer Stats
	gotPeer := false
	start := time.Now()
	ours, err := n.Serve(context.Background(), d, c.out, func(l string) {
		if rest, ok := strings.CutPrefix(l, "stats "); ok {
			mu.Lock()
			defer mu.Unlock()
			gotPeer = json.Unmarshal([]byte(rest), &peer) == nil
		}
	})
	if err != nil {
		t.Logf("this process, which failed: %s", ours)
		if cfg.Device != "" && vm.Inside() {
			logCounters(t, vm.Device{Name: cfg.Device})
		}
	}
	require.NoError(t, err)
	require.NoError(t, n.Close())
	c.stdin.Close()
	require.NoError(t, c.wait(), "the child failed")
	<-c.outDone()
	elapsed := time.Since(start)

	mu.Lock()
	defer mu.Unlock()
	require.True(t, gotPeer, "the child's stats line")
	for _, s := range []struct {
		who string
		st  Stats
	}{{"this process", ours}, {"child", peer}} {
		t.Logf("%s: %d ops in %v (%.0f/s): %s", s.who, s.st.Ops(), elapsed.Round(time.Millisecond),
			float64(s.st.Ops())/elapsed.Seconds(), s.st)
		assert.Zero(t, s.st.Mismatches, "%s: %s", s.who, s.st.FirstMismatch)
		assert.Zero(t, s.st.Errors, "%s: %v", s.who, s.st.ByStatus)
		assert.Zero(t, s.st.Refused, "%s: %s", s.who, s.st.FirstRefusal)
		for name, v := range map[string]uint64{"writes": s.st.Writes, "reads": s.st.Reads, "sends": s.st.Sends,
			"receives": s.st.Recvs, "atomics": s.st.Atomics} {
			assert.NotZero(t, v, "%s did no %s", s.who, name)
		}
	}
}

// privateRunDir gives the test's loopback contexts, and its children's, a
// runtime directory of their own, so that files left behind are the
// test's.
func privateRunDir(t *testing.T) string {
	if vm.Inside() {
		// The guest sees the host's files through a file system that
		// cannot hold sockets; the host runs these tests anyway.
		t.Skip("loopback stress tests run on the host; the VM job runs their verbs variants")
	}
	dir := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.Mkdir(dir, 0o700))
	t.Setenv(loopback.EnvRuntimeDir, dir)
	return dir
}

// logCounters logs the device's counters and how they move over two
// seconds: for a run that hung, whether the requests still in flight are
// being retried (RNR NAKs, timeouts) or sit still.
func logCounters(t *testing.T, d vm.Device) {
	before, err := d.Counters()
	if err != nil {
		t.Logf("counters: %v", err)
		return
	}
	time.Sleep(2 * time.Second)
	after, err := d.Counters()
	if err != nil {
		t.Logf("counters: %v", err)
		return
	}
	names := slices.Sorted(maps.Keys(after))
	var b strings.Builder
	for _, k := range names {
		if after[k] != 0 {
			fmt.Fprintf(&b, " %s=%d(%+d)", k, after[k], int64(after[k]-before[k]))
		}
	}
	t.Logf("%s counters, (change over 2 s):%s", d.Name, b.String())
}
