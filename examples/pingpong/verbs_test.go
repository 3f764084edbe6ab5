package main

import (
	"bytes"
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/test/vm"
)

// TestRunOnVerbs runs the example, unchanged, on the guest's Soft-RoCE
// device through the ib provider, in both completion modes. The server is
// on the device's IPv4 EID, the client on its IPv6 link-local one.
func TestRunOnVerbs(t *testing.T) {
	env := vm.Require(t)
	for _, event := range []bool{false, true} {
		t.Run(fmt.Sprintf("event=%v", event), func(t *testing.T) {
			var b bytes.Buffer
			res, err := run(&b, config{provider: "ib", dev: env.RXE.Name, count: 50, size: 4096, event: event})
			require.NoError(t, err, b.String())
			want := regexp.MustCompile(`^pingpong: ib/` + env.RXE.Name + `, server ::ffff:` + regexp.QuoteMeta(env.RXE.Addr.String()) +
				`, client fe80::\S+, RM, (poll|event) mode\nwrite/read: 4096 bytes ok\nmessages: 100 \(50 round trips of 4096 bytes\), bytes: 409600\n`)
			require.Regexp(t, want, b.String())
			require.Equal(t, 100, res.messages)
			t.Log(b.String())
		})
	}
}
