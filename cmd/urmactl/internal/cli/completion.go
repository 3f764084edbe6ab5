package cli

import (
	"github.com/spf13/cobra"

	"github.com/urma-go/sdk/internal/perf"
	"github.com/urma-go/sdk/urma"
)

// The shell completions (urmactl completion bash|zsh|fish|powershell, which
// cobra provides) offer the values a flag or argument takes: device names
// for NAME and -d, test names for perf's TEST, and each enumerated flag's
// words. addCompletions registers them on every command of root that has
// the argument or flag.
func addCompletions(root *cobra.Command) {
	flagWords := map[string][]string{
		"output": {OutputTable, OutputWide, OutputJSON},
		"mode":   {"RM", "RC", "UM"},
		"atomic": {"cas", "faa"},
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, words := range flagWords {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp))
			}
		}
		if c.Flags().Lookup("dev") != nil {
			_ = c.RegisterFlagCompletionFunc("dev", completeDevices)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeDevices offers the names of the devices this build's providers
// find.
func completeDevices(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	devs, err := urma.Devices()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	names := make([]cobra.Completion, len(devs))
	for i, d := range devs {
		names[i] = d.Name()
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// completeDeviceArg is device show's NAME: one device.
func completeDeviceArg(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeDevices(cmd, args, toComplete)
}

// completePerfArgs is perf's TEST; its SERVER is a host name, which the
// shell completes better than this could.
func completePerfArgs(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return perf.Tests(), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveDefault
}
