package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestPinThreadBindsOnlyTheCallingThread pins a goroutine's thread to the
// process's last core and checks that the thread, and not the process's
// other threads, is bound to it. The goroutine ends locked, so its thread
// exits with it and no pinned thread goes back to the runtime.
func TestPinThreadBindsOnlyTheCallingThread(t *testing.T) {
	var before unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &before))
	last := -1
	for c := range len(before) * 64 {
		if before.IsSet(c) {
			last = c
		}
	}
	require.GreaterOrEqual(t, last, 0)

	type result struct {
		err  error
		set  unix.CPUSet
		gerr error
	}
	done := make(chan result)
	go func() {
		var r result
		r.err = pinThread(last)
		r.gerr = unix.SchedGetaffinity(0, &r.set)
		done <- r
	}()
	r := <-done
	require.NoError(t, r.err)
	require.NoError(t, r.gerr)
	assert.Equal(t, 1, r.set.Count(), "the pinned thread's cores")
	assert.True(t, r.set.IsSet(last), "the pinned thread runs on core %d", last)

	var after unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &after))
	assert.Equal(t, before, after, "this test's own thread kept its cores")
}

func TestPinThreadRejectsCoresOutsideTheProcess(t *testing.T) {
	var allowed unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &allowed))
	for _, cpu := range []int{-2, len(allowed) * 64, 1 << 20} {
		err := pinThread(cpu)
		require.Error(t, err, "cpu %d", cpu)
		assert.Contains(t, err.Error(), "not one of this process's cores", "cpu %d", cpu)
	}
}
