package rdmanl

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

// TestProcessOf: a thread's objects belong to its process.
func TestProcessOf(t *testing.T) {
	pid := uint32(os.Getpid())
	assert.Equal(t, pid, processOf(pid))
	// Another thread of this process.
	done := make(chan uint32)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		done <- uint32(unix.Gettid())
	}()
	tid := <-done
	assert.Equal(t, pid, processOf(tid))
	assert.Zero(t, processOf(0))
	assert.Zero(t, processOf(1<<31-1), "no such thread")

	real := procRoot
	t.Cleanup(func() { procRoot = real })
	procRoot = t.TempDir()
	assert.NoError(t, os.MkdirAll(procRoot+"/7", 0o755))
	assert.NoError(t, os.WriteFile(procRoot+"/7/status", []byte("Name:\tx\nTgid:\tbad\n"), 0o644))
	assert.Zero(t, processOf(7), "an unreadable Tgid")
}
