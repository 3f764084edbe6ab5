package vm

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/urma-go/sdk/internal/kstack"
)

// WatchTimeout arranges that, inside the guest, a test binary about to be
// stopped by go test's -timeout first writes to stderr what the kernel is
// doing: each of its threads' state and kernel stack, and the stacks of
// the guest's blocked tasks (sysrq w) from the kernel log. A test stuck in
// a system call (an rdma_cm connect on soft-iWARP) otherwise dies with
// only Go's stacks, which end at the cgo call. Call it from TestMain,
// before m.Run; outside the guest, or without a timeout, it does nothing.
func WatchTimeout() {
	if !Inside() {
		return
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.timeout")
	if f == nil {
		return
	}
	timeout, ok := f.Value.(flag.Getter).Get().(time.Duration)
	if !ok || timeout <= 0 {
		return
	}
	// Early enough that the report is written before the panic, late
	// enough that only a test that is really stuck triggers it.
	margin := min(30*time.Second, timeout/5)
	time.AfterFunc(timeout-margin, func() {
		fmt.Fprintf(os.Stderr, "vm: %v left of the test timeout: what the kernel is doing\n%s", margin, KernelReport())
	})
}

// KernelReport describes this process's threads as the kernel sees them
// (state, wait channel, kernel stack) and appends the kernel log's account
// of the guest's blocked tasks. It needs root, which the guest has.
func KernelReport() string {
	var b strings.Builder
	b.WriteString(kstack.Threads())
	// sysrq w: the kernel logs every task in uninterruptible sleep.
	if err := os.WriteFile("/proc/sysrq-trigger", []byte("w"), 0); err != nil {
		fmt.Fprintf(&b, "sysrq w: %v\n", err)
		return b.String()
	}
	time.Sleep(500 * time.Millisecond)
	out, err := exec.Command("dmesg").CombinedOutput()
	if err != nil {
		fmt.Fprintf(&b, "dmesg: %v\n", err)
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		// Every context open logs this for the guest's dummy
		// netdevs: hundreds of lines that would push the rest out.
		if !strings.Contains(line, "speed is unknown") {
			lines = append(lines, line)
		}
	}
	fmt.Fprintf(&b, "kernel log (last 300 lines):\n%s\n", strings.Join(lines[max(0, len(lines)-300):], "\n"))
	return b.String()
}
