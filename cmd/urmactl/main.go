// Command urmactl inspects URMA devices (urmactl device ls, urmactl device
// show NAME), lists the segments and jetties of the live loopback contexts
// of this host (urmactl segment ls, urmactl jetty ls) and decodes marshalled
// descriptors (urmactl segment decode, urmactl jetty decode), and measures
// latency and bandwidth between two processes (urmactl perf write_lat ...).
// It links the loopback provider, so loopback0 is always listed. urmactl
// ping checks that a peer context answers and times the round trip.
package main

import (
	"fmt"
	"os"

	"github.com/urma-go/sdk/cmd/urmactl/internal/cli"
	"github.com/urma-go/sdk/internal/termsafe"
	_ "github.com/urma-go/sdk/provider/ib"
	_ "github.com/urma-go/sdk/provider/loopback"
)

func main() {
	if err := cli.New().Execute(); err != nil {
		// An error can quote what a peer sent; its lines are kept. An
		// empty one (ping's after Ctrl-C) has said what it had to.
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, "urmactl:", termsafe.Lines(msg))
		}
		os.Exit(cli.ExitCode(err))
	}
}
