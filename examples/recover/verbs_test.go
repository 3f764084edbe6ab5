package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/test/vm"
)

// TestRecoversOnVerbs runs the story, unchanged, on the guest's Soft-RoCE
// device through the ib provider: the server's Unregister ends the
// connections to the memory, the WRITE into it fails with
// REM_ACCESS_ABORT_ERR as on loopback, the JFS goes to ERROR, and the
// reset lets the next WRITE connect again.
func TestRecoversOnVerbs(t *testing.T) {
	env := vm.Require(t)
	for _, mode := range []string{"poll", "event"} {
		t.Run(mode, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, run(t.Context(), &b, exutil.Common{Provider: "ib", Dev: env.RXE.Name, EID: -1, Mode: mode}), b.String())
			assert.Regexp(t, story("ib", env.RXE.Name, "REM_ACCESS_ABORT_ERR"), b.String())
			t.Log(b.String())
		})
	}
}
