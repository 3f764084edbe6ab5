package cli

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// noCPU is the --cpu default: the test's thread is not pinned.
const noCPU = -1

// pinThread locks the calling goroutine to its OS thread and binds that
// thread, and only that one, to cpu, as ucx_perftest -c does. The runtime's
// other threads (sysmon, the poller, idle Ms) stay free to run elsewhere.
// taskset instead binds every thread and so makes GOMAXPROCS 1, under which
// a goroutine blocked in a system call for more than a sysmon tick has its
// P taken and handed to another thread, which puts two more context
// switches on the sleeper's core for every event-mode wake
// (bench/event-wake shows the cost).
func pinThread(cpu int) error {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return fmt.Errorf("cpu %d: reading this process's cores: %w", cpu, err)
	}
	if cpu < 0 || !allowed.IsSet(cpu) { // IsSet is false past the set's end
		return fmt.Errorf("cpu %d: not one of this process's cores (%d allowed)", cpu, allowed.Count())
	}
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("cpu %d: %w", cpu, err)
	}
	return nil
}
