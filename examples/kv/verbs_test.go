package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/test/vm"
)

// The same tests on the guest's Soft-RoCE device through the ib provider,
// with the same code: the one-process mode in both completion modes, and
// server and client processes.

func TestRunOnVerbs(t *testing.T) {
	env := vm.Require(t)
	for _, mode := range []string{"poll", "event"} {
		t.Run(mode, func(t *testing.T) {
			res, out, err := runArgs(t, "-provider", "ib", "-dev", env.RXE.Name, "-mode", mode, "-clients", "2",
				"-window", "4", "-requests", "500", "-duration", "0", "-keys", "64", "-value", "1024")
			require.NoError(t, err, out)
			checkRun(t, res, out, 500, 64, true)
			t.Log(out)
		})
	}
}

func TestProcessesOnVerbs(t *testing.T) {
	env := vm.Require(t)
	testProcesses(t, 500, "-provider", "ib", "-dev", env.RXE.Name)
}
