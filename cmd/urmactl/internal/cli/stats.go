package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
)

// StatsOptions configures Stats. The zero value prints the counters of
// every live loopback context of loopback.RuntimeDir(), and of their
// queues, as a table.
type StatsOptions struct {
	InspectOptions
	// Device, when set, prints the port counters and hw_counters of that
	// device (urma.Device.PortCounters) instead of the loopback contexts.
	Device string
	// Port is the port of Device to print; 0 means every port.
	Port int
	// Output is "table" (or empty), "wide" or "json".
	Output string
}

func newStatsCmd() *cobra.Command {
	var opts StatsOptions
	c := &cobra.Command{
		Use:   "stats",
		Short: "Show the counters of the live loopback contexts and their queues, or a device's port counters",
		Long: "stats prints the counters every context keeps, always on, as urma_admin show_stats\n" +
			"does: per context (its totals, closed queues included) and per JFS, JFR, Jetty\n" +
			"and JFC: requests posted and their bytes, receives posted, refused posts, RNR\n" +
			"retries, completion records polled and those of each error status. Without -d\n" +
			"it asks every live loopback context of this host, as jetty ls does.\n\n" +
			"With -d it prints a verbs device's port counters (counters/) and the driver's\n" +
			"hw_counters/ from /sys/class/infiniband/<dev>/ports/<n>/.\n\n" +
			"Columns: POSTED requests accepted, BYTES their data, RECV receives accepted,\n" +
			"POLLED completion records polled, FAILED those with an error status, POST_ERR\n" +
			"posts refused, RNR retries. A context's row sums its queues'; -o wide adds how\n" +
			"many queues it has, each error status with its count, and the command.",
		Example: "  urmactl stats\n  urmactl stats -o wide\n  urmactl stats -o json\n" +
			"  urmactl stats -d rxe0\n  urmactl stats -d mlx5_0 --port 1 -o json",
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Warn = cmd.ErrOrStderr()
			return Stats(cmd.OutOrStdout(), opts)
		},
	}
	addOutputFlag(c, &opts.Output)
	addInspectFlags(c, &opts.InspectOptions)
	c.Flags().StringVarP(&opts.Device, "dev", "d", "", "show the port counters of this device instead")
	c.Flags().IntVar(&opts.Port, "port", 0, "with -d, the port to show (default every port)")
	return c
}

// Stats writes the counters opts asks for.
func Stats(w io.Writer, opts StatsOptions) error {
	if err := checkOutput(orTable(opts.Output)); err != nil {
		return err
	}
	if opts.Port < 0 {
		return usage(fmt.Errorf("invalid port %d (want >= 1, or 0 for every port)", opts.Port))
	}
	if opts.Device != "" {
		return portStats(w, opts)
	}
	if opts.Port != 0 {
		return usage(fmt.Errorf("--port needs -d"))
	}
	ctxs, err := inspectBy(opts.InspectOptions, loopback.InspectStats)
	if err != nil {
		return err
	}
	return FormatStats(w, ctxs, opts.Output)
}

// contextStats is a context in stats' JSON.
type contextStats struct {
	PID     int                        `json:"pid"`
	EID     string                     `json:"eid"`
	UASID   uint32                     `json:"uasid"`
	Stats   *loopback.ContextStatsInfo `json:"stats"`
	Jetties []loopback.JettyInfo       `json:"jetties"`
	JFCs    []loopback.JFCInfo         `json:"jfcs"`
}

// FormatStats writes the counters of ctxs (from loopback.InspectStats) in
// the given format: a row per context (its totals), then one per queue
// and JFC. JSON is a list of contexts with their stats, jetties and jfcs,
// whose keys are stable.
func FormatStats(w io.Writer, ctxs []loopback.ContextInfo, output string) error {
	output = orTable(output)
	if err := checkOutput(output); err != nil {
		return err
	}
	if output == OutputJSON {
		out := []contextStats{}
		for _, ci := range ctxs {
			cs := contextStats{PID: ci.PID, EID: ci.EID, UASID: ci.UASID, Stats: ci.Stats, Jetties: ci.Jetties, JFCs: ci.JFCs}
			if cs.Jetties == nil {
				cs.Jetties = []loopback.JettyInfo{}
			}
			if cs.JFCs == nil {
				cs.JFCs = []loopback.JFCInfo{}
			}
			out = append(out, cs)
		}
		return writeJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprint(tw, "EID\tUASID\tOBJECT\tID\tPOSTED\tBYTES\tRECV\tPOLLED\tFAILED\tPOST_ERR\tRNR\tPID")
	if output == OutputWide {
		fmt.Fprint(tw, "\tQUEUES\tERRORS\tCOMMAND")
	}
	fmt.Fprintln(tw)
	for _, ci := range ctxs {
		row := func(kind, id, queues string, s *loopback.QueueStatsInfo) {
			if s == nil {
				s = &loopback.QueueStatsInfo{}
			}
			// Every string came from the context's process: see safe.
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d", safe(ci.EID), ci.UASID, safe(kind), id,
				s.Posted, s.Bytes, s.RecvPosted, s.Completions, s.Failed(), s.PostErrors, s.RNRRetries, ci.PID)
			if output == OutputWide {
				fmt.Fprintf(tw, "\t%s\t%s\t%s", queues, errorList(s.Errors), processName(ci.PID))
			}
			fmt.Fprintln(tw)
		}
		if ci.Stats != nil {
			st := ci.Stats
			row("context", "-", fmt.Sprintf("jfs=%d,jfr=%d,jetty=%d,jfc=%d", st.JFS, st.JFR, st.Jetty, st.JFC), &st.Total)
		}
		for _, j := range ci.Jetties {
			row(j.Kind, fmt.Sprint(j.ID), "-", j.Stats)
		}
		for _, j := range ci.JFCs {
			row("jfc", fmt.Sprint(j.ID), "-", j.Stats)
		}
	}
	return tw.Flush()
}

// errorList is "STATUS=n,..." in status order, or "-".
func errorList(m map[string]uint64) string {
	if len(m) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%d", safe(k), m[k])
	}
	return b.String()
}

// portCounters is a port in stats -d's JSON.
type portCounters struct {
	Device     string            `json:"device"`
	Port       int               `json:"port"`
	Counters   map[string]uint64 `json:"counters"`
	HWCounters map[string]uint64 `json:"hw_counters"`
}

// portStats writes the port counters of opts.Device.
func portStats(w io.Writer, opts StatsOptions) error {
	dev, err := urma.DeviceByName(opts.Device)
	if err != nil {
		return err
	}
	ports := []int{opts.Port}
	if opts.Port == 0 {
		ports = ports[:0]
		for i := range dev.Attr().Ports {
			ports = append(ports, i+1)
		}
		if len(ports) == 0 {
			ports = append(ports, 1)
		}
	}
	var out []portCounters
	for _, p := range ports {
		pc, err := dev.PortCounters(p)
		if err != nil {
			return err
		}
		out = append(out, portCounters{Device: dev.Name(), Port: pc.Port, Counters: pc.Counters, HWCounters: pc.HWCounters})
	}
	return formatPortCounters(w, out, opts.Output)
}

// formatPortCounters writes ps: a row per counter, the port's counters
// first, then its hw_counters, each by name; wide and table are the same.
func formatPortCounters(w io.Writer, ps []portCounters, output string) error {
	output = orTable(output)
	if err := checkOutput(output); err != nil {
		return err
	}
	if output == OutputJSON {
		if ps == nil {
			ps = []portCounters{}
		}
		return writeJSON(w, ps)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tPORT\tSET\tCOUNTER\tVALUE")
	for _, p := range ps {
		for _, set := range []struct {
			name string
			m    map[string]uint64
		}{{"counters", p.Counters}, {"hw_counters", p.HWCounters}} {
			for _, k := range slices.Sorted(maps.Keys(set.m)) {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\n", safe(p.Device), p.Port, set.name, safe(k), set.m[k])
			}
		}
	}
	return tw.Flush()
}
