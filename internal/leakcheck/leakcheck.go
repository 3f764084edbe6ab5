// Package leakcheck makes a test binary fail when its tests leave behind
// goroutines, file descriptors, shared mappings, child processes or open
// provider contexts and objects. An RDMA SDK that leaks one of these in a
// test leaks it in a long-running server too, where it is much harder to
// find.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
package leakcheck

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/urma-go/sdk/urma"
)

// settleFor is how long the check waits for things that go away
// asynchronously (goroutines that return after a Close, fds closed by
// them) before it calls them leaks.
const settleFor = 10 * time.Second

// Main runs the tests and, if they pass, fails the run (exit code 1) when
// something they created is still there. It returns the exit code for
// os.Exit.
func Main(m *testing.M) int {
	warmUp()
	before := Take()
	code := m.Run()
	if code != 0 || skipped() {
		return code
	}
	if err := Check(before, settleFor); err != nil {
		fmt.Fprintf(os.Stderr, "leakcheck: %v\n", err)
		return 1
	}
	return 0
}

// warmUp opens and closes a context on every device, so that what a
// provider keeps for the life of the process is in the baseline, not
// taken for a test's leak: librdmacm, for one, opens every verbs device
// on first use and keeps it open.
func warmUp() {
	devs, err := urma.Devices()
	if err != nil {
		return
	}
	for _, d := range devs {
		if c, err := urma.Open(d, 0, nil); err == nil {
			_ = c.Close()
		}
	}
}

// skipped reports runs where leaks are not the tests' doing: fuzzing keeps
// its workers and their pipes, and a run listing tests creates nothing.
func skipped() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return true
		}
	}
	return os.Getenv("URMA_LEAKCHECK") == "off"
}

// Check compares the process now with the snapshot taken before, waiting
// up to settle for stragglers. The error lists every leak it found.
func Check(before Snapshot, settle time.Duration) error {
	deadline := time.Now().Add(settle)
	for {
		leaks := Take().leaksSince(before)
		if len(leaks) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d leak(s) after the tests passed (set URMA_LEAKCHECK=off to skip):\n%s",
				len(leaks), strings.Join(leaks, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
