package main

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/test/vm"
)

// TestEveryJobOnVerbs runs every job, unchanged, on the guest's Soft-RoCE
// device through the ib provider, in both completion modes: the server on
// the device's IPv4 EID, the client on its IPv6 link-local one.
func TestEveryJobOnVerbs(t *testing.T) {
	env := vm.Require(t)
	for _, mode := range []string{"poll", "event"} {
		t.Run(mode, func(t *testing.T) {
			var b bytes.Buffer
			cfg := config{Common: exutil.Common{Provider: "ib", Dev: env.RXE.Name, EID: -1, Mode: mode}}
			require.NoError(t, run(t.Context(), &b, cfg), b.String())
			assert.Equal(t, wantJobs, jobLines(b.String()), b.String())
			assert.Regexp(t, `(?m)^server: ib/`+env.RXE.Name+`, eid ::ffff:`+regexp.QuoteMeta(env.RXE.Addr.String())+`, waiting on`, b.String())
			t.Log(b.String())
		})
	}
	t.Run("um", func(t *testing.T) {
		var b bytes.Buffer
		cfg := config{Common: exutil.Common{Provider: "ib", Dev: env.RXE.Name, EID: -1, Mode: "poll"}, um: true}
		require.NoError(t, run(t.Context(), &b, cfg), b.String())
		assert.Equal(t, wantJobs[:3], jobLines(b.String()), b.String())
		t.Log(b.String())
	})
}
