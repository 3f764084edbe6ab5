package cli_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/cmd/urmactl/internal/cli"
	_ "github.com/urma-go/sdk/provider/ib"
	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
)

// TestPingVerbs runs urmactl ping on the guest's rxe0 and siw0: ping -l
// answers on the device's first EID, and a ping of that EID gets replies;
// before, nothing answered it (status 1, at once).
func TestPingVerbs(t *testing.T) {
	env := vm.Require(t)
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		t.Run(d.Name, func(t *testing.T) {
			dev, err := urma.DeviceByName(d.Name)
			require.NoError(t, err)
			eid := dev.EIDs()[0].Addr().Unmap().String()
			o := cli.PingOptions{Target: eid, Device: d.Name, Count: 3, Interval: 50 * time.Millisecond,
				Timeout: 5 * time.Second, Size: cli.DefaultPingSize}

			var out bytes.Buffer
			err = cli.Ping(context.Background(), &out, o)
			require.ErrorIs(t, err, urma.ErrNotFound, out.String())
			assert.Equal(t, 1, cli.ExitCode(err))

			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			var lout syncBuffer
			served := make(chan error, 1)
			go func() {
				served <- cli.Ping(ctx, &lout, cli.PingOptions{Device: d.Name, Listen: true, Interval: time.Second, Timeout: time.Second})
			}()
			require.Eventually(t, func() bool { return strings.Contains(lout.String(), "until Ctrl-C") }, 10*time.Second, time.Millisecond)

			out.Reset()
			err = cli.Ping(context.Background(), &out, o)
			require.NoError(t, err, out.String())
			t.Logf("\n%s", out.String())
			s := out.String()
			assert.Len(t, regexp.MustCompile(`(?m)^16 bytes from `+regexp.QuoteMeta(eid)+`: seq=\d time=[\d.]+ ms$`).FindAllString(s, -1), 3, s)
			assert.Contains(t, s, "3 packets transmitted, 3 received, 0% packet loss")
			assert.Regexp(t, rttLine, s)

			stop()
			assert.Equal(t, cli.ExitInterrupted, cli.ExitCode(<-served))
		})
	}
}
