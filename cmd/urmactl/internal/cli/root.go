// Package cli implements urmactl's commands. New returns the root command;
// the work is done by functions that take an options struct and an
// io.Writer, so tests can call them without a process.
package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Output formats accepted by -o.
const (
	OutputTable = "table"
	OutputWide  = "wide"
	OutputJSON  = "json"
)

// checkOutput rejects an unknown -o value.
func checkOutput(o string) error {
	switch o {
	case OutputTable, OutputWide, OutputJSON:
		return nil
	}
	return usage(fmt.Errorf("invalid output format %q (want %s)", o,
		strings.Join([]string{OutputTable, OutputWide, OutputJSON}, "|")))
}

// New returns urmactl's root command. Errors are returned from Execute, not
// printed by cobra; the caller prints them and exits with ExitCode's
// status (2 for a UsageError).
func New() *cobra.Command {
	root := &cobra.Command{
		Use:   "urmactl",
		Short: "Inspect URMA devices, segments and jetties; measure performance",
		Long: "urmactl inspects the devices of the registered URMA providers, lists the\n" +
			"segments and jetties of the live loopback contexts on this host, decodes\n" +
			"the segment and jetty descriptors that peers exchange, and measures latency\n" +
			"and bandwidth between two processes (perf).",
		Example: "  urmactl device ls\n" +
			"  urmactl device show loopback0 -o json\n" +
			"  urmactl segment ls -o wide\n" +
			"  urmactl perf write_lat                    # then, elsewhere: urmactl perf write_lat --eid 1 127.0.0.1\n" +
			"  source <(urmactl completion bash)         # completions of commands, devices, tests and flag values",
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE:          groupRun,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage(err) })
	root.AddCommand(newDeviceCmd(), newSegmentCmd(), newJettyCmd(), newPerfCmd())
	// Counters (stats.go).
	root.AddCommand(newStatsCmd())
	// ping: reachability and round trip to a peer context.
	root.AddCommand(newPingCmd())
	addCompletions(root)
	return root
}
