package vm

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKernelReportShowsABlockedThread blocks a thread in a pipe read and
// finds it in the report, with the kernel log's blocked-task dump.
func TestKernelReportShowsABlockedThread(t *testing.T) {
	Require(t)
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var b [1]byte
		_, _ = syscall.Read(p[0], b[:]) // a blocking read: the thread waits in the kernel
	}()
	time.Sleep(200 * time.Millisecond)
	report := KernelReport()
	_, _ = syscall.Write(p[1], []byte{1})
	<-done
	syscall.Close(p[0])
	syscall.Close(p[1])
	for _, want := range []string{"pipe_read", "Show Blocked State"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}

// TestWatchTimeoutReportsBeforeTheTimeout runs a test that hangs in a
// child test binary with a short timeout: its output has the report
// before go test's timeout panic.
func TestWatchTimeoutReportsBeforeTheTimeout(t *testing.T) {
	if os.Getenv("URMA_VM_HANG") == "1" {
		WatchTimeout()
		select {}
	}
	Require(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchTimeoutReportsBeforeTheTimeout$", "-test.timeout=10s")
	cmd.Env = append(os.Environ(), "URMA_VM_HANG=1")
	out, _ := cmd.CombinedOutput()
	report := strings.Index(string(out), "what the kernel is doing")
	panicked := strings.Index(string(out), "test timed out")
	if report < 0 || panicked < report {
		t.Fatalf("want the kernel report before the timeout panic, got:\n%s", out)
	}
}
