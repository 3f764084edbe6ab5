// Package kstack reads the kernel's view of this process's threads, for
// the report of a test stuck in a system call: Go's own stacks end at the
// cgo call, and where the thread waits is in the driver.
package kstack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Threads describes each thread of this process whose kernel stack the
// system shows (Linux, as root): its id, state, wait channel and stack.
// Elsewhere it returns "".
func Threads() string {
	var b strings.Builder
	tasks, _ := filepath.Glob("/proc/self/task/*")
	for _, dir := range tasks {
		stack, err := os.ReadFile(filepath.Join(dir, "stack"))
		if err != nil || len(stack) == 0 {
			continue
		}
		fmt.Fprintf(&b, "thread %s (%s, wchan %s):\n%s", filepath.Base(dir), state(dir), readTrim(filepath.Join(dir, "wchan")), stack)
	}
	return b.String()
}

// state is the state letter and name of /proc/self/task/TID/status.
func state(dir string) string {
	status, _ := os.ReadFile(filepath.Join(dir, "status"))
	for _, line := range strings.Split(string(status), "\n") {
		if s, ok := strings.CutPrefix(line, "State:"); ok {
			return strings.TrimSpace(s)
		}
	}
	return "state unknown"
}

func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}
