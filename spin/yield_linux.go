package spin

import "syscall"

// yieldCore gives the rest of the thread's turn on its core to any other
// thread ready to run there. A system call the scheduler knows of
// (Syscall, not RawSyscall): if the thread stays off its core for long,
// Go hands the goroutine's processor to another thread.
func yieldCore() { syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
