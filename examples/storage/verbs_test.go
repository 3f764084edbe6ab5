package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
	"github.com/urma-go/sdk/test/vm"
)

// TestProcessesOnVerbs runs server and client programs through the ib
// provider on the guest's Soft-RoCE device, with inline and RDMA payloads
// and the corruption check; the views take the software path there.
func TestProcessesOnVerbs(t *testing.T) {
	env := vm.Require(t)
	bin := extest.Build(t)
	for _, size := range []string{"500", "20000"} {
		t.Run(size, func(t *testing.T) {
			port := strings.Split(extest.FreeAddr(t), ":")[1]
			addr := env.RXE.Addr.String() + ":" + port
			srv := extest.Start(t, "server", bin, "-provider", "ib", "-dev", env.RXE.Name, "-server", "-addr", addr)
			srv.Await(regexp.MustCompile(`listening on `+regexp.QuoteMeta(addr)), time.Minute)
			cli := extest.Start(t, "client", bin, "-provider", "ib", "-dev", env.RXE.Name, "-client", "-addr", addr,
				"-count", "100", "-size", size, "-corrupt")
			out, err := cli.Wait(3 * time.Minute)
			require.NoError(t, err, "client:\n%s\nserver:\n%s", out, srv.Output())
			assert.Contains(t, out, "-byte write refused (corrupted), nothing stored")
			assert.Regexp(t, clientLine, out)
			sout, err := srv.Wait(time.Minute)
			require.NoError(t, err, sout)
			t.Log(out, sout)
		})
	}
}
