package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/urma-go/sdk/provider/loopback"
)

// newGroupCmd returns a command that only holds subcommands (see
// groupRun).
func newGroupCmd(use string, aliases []string, short string) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Aliases: aliases,
		Short:   short,
		Args:    cobra.ArbitraryArgs,
		RunE:    groupRun,
	}
}

// groupRun runs a command that only holds subcommands when none of them
// was named. Cobra would print help for an unknown subcommand and exit 0;
// a typo must fail.
//
// Such a command takes any arguments (cobra.ArbitraryArgs) so that cobra
// parses its flags before judging them. Cobra finds the subcommand first,
// guessing that an unknown flag takes the next word as its value: in
// "urmactl --bogus device ls" it skips "device" and would report the
// unknown command "ls". Parsing the flags reports the unknown flag itself.
func groupRun(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usage(fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath()))
	}
	return cmd.Help()
}

// addOutputFlag adds -o/--output.
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", OutputTable, "output format: table|wide|json")
}

// addInspectFlags adds the flags that choose which loopback contexts to ask.
func addInspectFlags(cmd *cobra.Command, opts *InspectOptions) {
	// The default stays "" rather than the resolved path so that only a
	// directory named on purpose must exist (see InspectOptions.Dir).
	cmd.Flags().StringVar(&opts.Dir, "dir", "", fmt.Sprintf("loopback runtime directory (default %s; $%s changes it)",
		loopback.RuntimeDir(), loopback.EnvRuntimeDir))
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", DefaultInspectTimeout, "how long to wait for each context to answer")
}

// addDeviceFlag adds -d/--dev, the device whose objects segment ls and
// jetty ls list.
func addDeviceFlag(cmd *cobra.Command, dev *string) {
	cmd.Flags().StringVarP(dev, "dev", "d", "", fmt.Sprintf("an RDMA device whose objects to list, as the kernel has them (empty or %s: the loopback contexts)",
		loopback.DeviceName))
}
