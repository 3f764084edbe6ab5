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
// provider on the guest's Soft-RoCE and soft-iWARP devices: addr= is the
// device's address, which names both the out-of-band listener and the
// server's EID. On siw0 the ping loop mixes READs with SENDs both ways,
// which exercises zero-length READ responses (see patch_siw in
// test/vm/setup) and the SGE of the provider's zero-length READs.
func TestProcessesOnVerbs(t *testing.T) {
	env := vm.Require(t)
	bin := extest.Build(t)
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		for _, test := range []string{"count=50,validate,size=4096", "count=50,rlat", "count=50,wlat,poll", "count=50,bw,size=65536"} {
			t.Run(d.Name+"/"+test, func(t *testing.T) {
				port := strings.Split(extest.FreeAddr(t), ":")[1]
				addr := d.Addr.String()
				srv := extest.Start(t, "server", bin, "-provider", "ib", "-dev", d.Name, "server,addr="+addr+",port="+port)
				srv.Await(regexp.MustCompile(`listening on `+regexp.QuoteMeta(addr)+`:`+port), time.Minute)
				cli := extest.Start(t, "client", bin, "-provider", "ib", "-dev", d.Name, "client,addr="+addr+",port="+port+","+test)
				out, err := cli.Wait(2 * time.Minute)
				require.NoError(t, err, "client:\n%s\nserver:\n%s", out, srv.Output())
				line := `(?m)^1-` + d.Name + ` \d+ \d+ \d+ \d+ \d+ \d+ \d+ \d+$`
				assert.Regexp(t, line, out)
				sout, err := srv.Wait(time.Minute)
				require.NoError(t, err, sout)
				assert.Regexp(t, line, sout)
				if strings.Contains(test, "validate") {
					assert.Contains(t, sout, "1-"+d.Name+" 1600 100 1600 100 204800 50 204800 50\n")
				}
				t.Log(out, sout)
			})
		}
	}
}
