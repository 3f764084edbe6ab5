package kstack

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestThreadsShowsABlockedRead blocks a thread in a pipe read and finds it
// in the report, sleeping in pipe_read.
func TestThreadsShowsABlockedRead(t *testing.T) {
	if _, err := os.ReadFile("/proc/self/stack"); err != nil {
		t.Skipf("the kernel does not show this process its stacks (needs Linux and root): %v", err)
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	done := make(chan struct{})
	go func() {
		defer close(done)
		var b [1]byte
		_, _ = syscall.Read(p[0], b[:]) // a blocking read: the thread waits in the kernel
	}()
	defer func() {
		_, _ = syscall.Write(p[1], []byte{1})
		<-done
	}()
	// The reader may take a moment to reach the kernel.
	var report string
	for range 50 {
		if report = Threads(); strings.Contains(report, "pipe_read") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(report, "pipe_read") || !strings.Contains(report, "S (sleeping)") {
		t.Fatalf("no thread sleeping in pipe_read in the report:\n%s", report)
	}
}
