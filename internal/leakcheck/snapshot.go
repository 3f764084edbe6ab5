package leakcheck

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/urma-go/sdk/internal/live"
)

// Snapshot is the state of the process that leaks are measured against.
type Snapshot struct {
	goroutines map[int]string  // id -> stack
	fds        map[string]bool // "fd -> target"
	mappings   int
	live       live.Counts
}

// Take records the process's state now; pass it to Check later.
func Take() Snapshot {
	ensureNetpoll()
	fds := map[string]bool{}
	for _, f := range openFDs() {
		fds[f] = true
	}
	return Snapshot{goroutines: goroutines(), fds: fds, mappings: len(sharedMappings()), live: live.Now()}
}

// leaksSince describes everything present now that was not in before.
func (now Snapshot) leaksSince(before Snapshot) []string {
	var leaks []string
	for id, stack := range now.goroutines {
		if _, old := before.goroutines[id]; !old && !ignorable(stack) {
			leaks = append(leaks, "goroutine "+stack)
		}
	}
	for f := range now.fds {
		if !before.fds[f] {
			leaks = append(leaks, "file descriptor "+f)
		}
	}
	if now.mappings > before.mappings {
		leaks = append(leaks, fmt.Sprintf("%d shared mapping(s) more than before: %s",
			now.mappings-before.mappings, strings.Join(sharedMappings(), "; ")))
	}
	if d := now.live.Contexts - before.live.Contexts; d > 0 {
		leaks = append(leaks, fmt.Sprintf("%d provider context(s) never closed", d))
	}
	if d := now.live.Objects - before.live.Objects; d > 0 {
		leaks = append(leaks, fmt.Sprintf("%d provider object(s) never closed, nor their context", d))
	}
	for _, pid := range children() {
		leaks = append(leaks, fmt.Sprintf("child process %d (%s) never waited for", pid, comm(pid)))
	}
	sort.Strings(leaks)
	return leaks
}

// ignorable is a goroutine the Go runtime or testing starts and keeps.
func ignorable(stack string) bool {
	for _, s := range []string{
		"os/signal.signal_recv", "os/signal.loop", "runtime.ensureSigM",
		"testing.(*M).", "testing.runTests", "runtime/trace.",
	} {
		if strings.Contains(stack, s) {
			return true
		}
	}
	return false
}

// goroutines returns the stacks of all goroutines but the caller's, by id.
func goroutines() map[int]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	stacks := map[int]string{}
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 {
			continue // the caller
		}
		var id int
		if _, err := fmt.Sscanf(g, "goroutine %d ", &id); err == nil {
			stacks[id] = g
		}
	}
	return stacks
}

// openFDs lists this process's descriptors as "fd -> target".
func openFDs() []string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue // the directory's own fd, closed by now
		}
		out = append(out, e.Name()+" -> "+target)
	}
	return out
}

// sharedMappings lists the mappings of loopback memory (memfds named
// urma-*) and of verbs devices (doorbells and queues under
// /dev/infiniband).
func sharedMappings() []string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "memfd:urma-") || strings.Contains(line, "/dev/infiniband/") {
			fields := strings.Fields(line)
			out = append(out, fields[0]+" "+strings.Join(fields[5:], " "))
		}
	}
	return out
}

// children lists this process's child processes that still exist (running
// or zombies nobody waited for).
func children() []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// ensureNetpoll makes the runtime create its poller (an epoll fd and an
// eventfd, kept for the process's life) before the first snapshot, so
// that they are not taken for leaks of the test that first used a pipe.
func ensureNetpoll() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	r.Close()
	w.Close()
}
