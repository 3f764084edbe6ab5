package stress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/internal/leakcheck"
)

// stoppedWait is how long a stopped peer is given before it is killed:
// longer than any request needs that does not wait on it, and longer than
// the loopback's control requests wait for its answer (5 s): a SEND into a
// receive buffer whose memory this side has not mapped yet asks the peer
// for it, and must fail, not hang, when the peer does not answer.
const stoppedWait = 7 * time.Second

// faultConfig makes SENDs give up on a receiver that stopped taking them
// after 3 retries 5 ms apart: a stopped peer must make requests fail, not
// hang. The drain allows for the loopback's control requests, which give
// up on a stopped peer after 5 s (the first SEND into a receive buffer
// asks the peer for that buffer's memory).
var faultConfig = Config{Workers: 4, Ledger: true, RNRRetry: 3, RNRTimeout: 5 * time.Millisecond, Drain: 15 * time.Second}

// TestPeerFaults kills the peer process at a random point, -faults times
// (see length_test.go): with SIGKILL, or with SIGSTOP held longer than the
// RNR timeout before the SIGKILL. Each time, this process's requests must
// all complete (no hang): while the peer is stopped, unless it stopped in
// the middle of a push into one of our JFCs (loopback) or of a connection
// handshake (verbs), and after its death in any case. The WRITEs the peer reported complete must be intact in this
// process's memory, and nothing may be left behind:
// goroutines, descriptors, mappings, provider objects, the child, or files
// in the runtime directory.
func TestPeerFaults(t *testing.T) {
	dir := privateRunDir(t)
	outcomes := map[string]int{}
	var checked, completed uint64
	for i := range *faultRuns {
		res := faultRun(t, i, dir, "")
		if t.Failed() {
			return
		}
		outcomes[res.outcome]++
		checked += uint64(res.checked)
		completed += res.stats.Ops()
	}
	t.Logf("%d runs: %s; %d of this side's requests completed, %d blocks the peer reported written checked intact",
		*faultRuns, summary(outcomes), completed, checked)
}

type faultResult struct {
	outcome string
	checked int
	stats   Stats
}

// faultRun is one run against a child on device (loopback0 if empty).
func faultRun(t *testing.T, i int, dir, device string) faultResult {
	rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
	stop := rng.IntN(3) == 0
	// Most kills land in the data phase, up to 300 ms into it; one in
	// five anywhere in the first 30 ms, most often during the setup.
	inSetup := rng.IntN(5) == 0
	after := time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
	if inSetup {
		after = time.Duration(rng.Int64N(int64(30 * time.Millisecond)))
	}
	cfg := faultConfig
	cfg.Device = device
	before := leakcheck.Take()

	start := time.Now()
	c := startChild(t, childSpec{Config: cfg})
	n, err := Open(cfg, c.stdin)
	require.NoError(t, err)
	var ledger Ledger
	ctx, cancel := context.WithCancel(context.Background())
	type served struct {
		st  Stats
		err error
	}
	done := make(chan served, 1)
	go func() {
		st, err := n.Serve(ctx, 0, c.out, ledger.Add)
		done <- served{st, err}
	}()

	if !inSetup {
		for !n.Running() && time.Since(start) < 30*time.Second {
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(after)
	how := "SIGKILL"
	// A peer stopped during the setup would leave this side waiting for
	// its hello for ever, which is the test's waiting, not the SDK's.
	stop = stop && n.Running()
	if stop {
		how = "SIGSTOP"
		c.signal(syscall.SIGSTOP)
		// Longer than a SEND's RNR retries: its requests must end while
		// the peer is still stopped.
		time.Sleep(100 * time.Millisecond)
		n.PeerDone()
	} else {
		c.signal(syscall.SIGKILL)
	}
	cancel()
	var res served
	waited := false
	if stop {
		select {
		case res = <-done: // everything ended while the peer is stopped
		case <-time.After(stoppedWait):
			// Something waits on the stopped peer itself. On loopback:
			// it stopped midway through pushing a record into one of
			// our JFCs (or a message into one of our inboxes), and the
			// slot it holds hides the records after it until it runs or
			// dies (docs/semantics.md); the JFCs say so, and a wait
			// with nothing held is a hang. On verbs: it stopped in the
			// middle of a connection handshake, which waits for
			// rdma_cm's timeout. Its death must end both.
			waited = true
			if device == "" {
				if held := n.HeldByOthers(); held == 0 {
					c.signal(syscall.SIGKILL)
					t.Logf("this process's goroutines:\n%s", goroutines())
					t.Fatalf("run %d (%s after %v): this side still waits on the stopped peer after %v, which holds nothing of its JFCs: a hang", i, how, after, stoppedWait)
				}
			}
		}
		c.signal(syscall.SIGKILL)
	}
	if !stop || waited {
		select {
		case res = <-done:
		case <-time.After(cfg.Drain + 10*time.Second):
			c.signal(syscall.SIGKILL)
			t.Fatalf("run %d (%s after %v): this side hangs", i, how, after)
		}
	}
	_ = c.wait()
	if res.err != nil && !errors.Is(res.err, ErrHang) {
		_, _ = io.Copy(io.Discard, c.out) // setup failed: nobody reads the rest
	}
	<-c.outDone()
	c.out.f.Close()
	checked, bad := n.Check(&ledger)
	require.NoError(t, n.Close())
	c.stdin.Close()

	outcome := how + ": "
	if waited {
		outcome = how + ", still waited on after " + stoppedWait.String() + ", then SIGKILL: "
	}
	switch {
	case errors.Is(res.err, ErrHang):
		t.Fatalf("run %d (%s after %v): %v", i, how, after, res.err)
	case res.err != nil:
		outcome += "peer gone during setup"
	case res.st.Errors > 0:
		outcome += "requests failed (" + statuses(res.st.ByStatus) + ")"
	default:
		outcome += "every request succeeded"
	}
	if res.st.Refused > 0 {
		outcome += "; posts refused"
	}
	require.Zero(t, bad, "run %d (%s after %v): %d of %d blocks the peer reported written are not intact", i, how, after, bad, checked)
	require.Zero(t, res.st.Mismatches, "run %d: %s", i, res.st.FirstMismatch)
	require.NoError(t, leakcheck.Check(before, 10*time.Second), "run %d (%s after %v)", i, how, after)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "run %d (%s after %v): files left in the runtime directory", i, how, after)
	return faultResult{outcome: outcome, checked: checked, stats: res.st}
}

// goroutines is the stack of every goroutine of this process, to tell
// what a hang waits on.
func goroutines() string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	return b.String()
}

func statuses(m map[string]uint64) string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

func summary(m map[string]int) string {
	var s []string
	for k, v := range m {
		s = append(s, fmt.Sprintf("%d× %s", v, k))
	}
	sort.Strings(s)
	return strings.Join(s, "; ")
}
