package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
)

// JettyListOptions configures JettyList. The zero value lists the JFSs,
// JFRs and Jetties of every context in loopback.RuntimeDir() as a table.
type JettyListOptions struct {
	InspectOptions
	// Output is "table" (or empty), "wide" or "json".
	Output string

	// Device, when it names an RDMA device (anything but "" and
	// loopback.DeviceName), lists that device's QPs, SRQs and CQs from the
	// kernel instead, as IBJettyInfo; Dir is then unused and Timeout bounds
	// the kernel's answer.
	Device string
}

// JettyDecodeOptions configures JettyDecode.
type JettyDecodeOptions struct {
	// Input is the descriptor in hex; "" or "-" reads Stdin instead.
	Input string
	// Stdin holds the descriptor, as hex text or as the 32 raw bytes.
	Stdin io.Reader
	// Output is "table" (or empty), "wide" or "json"; table and wide are the same.
	Output string
}

func newJettyCmd() *cobra.Command {
	jc := newGroupCmd("jetty", nil, "List live JFSs, JFRs and Jetties and decode jetty descriptors")
	jc.Example = "  urmactl jetty ls\n  urmactl jetty ls -d rxe0\n  urmactl jetty decode 0102...   # 64 hex digits"

	var lsOpts JettyListOptions
	ls := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the JFSs, JFRs and Jetties of every live loopback context, or of an RDMA device",
		Long: "Without -d (or with -d " + loopback.DeviceName + "), list the JFSs, JFRs and Jetties of every live\n" +
			"loopback context on this host. With -d and an RDMA device, list what the kernel\n" +
			"holds on that device for every process (RDMA netlink, as rdma resource show):\n" +
			"QPs as JETTY (mode RC, or UM for UD), SRQs as JFR and CQs as JFC, with their\n" +
			"owners.",
		Example: "  urmactl jetty ls\n  urmactl jetty ls -o wide --timeout 500ms\n  urmactl jetty ls -o json\n" +
			"  urmactl jetty ls -d rxe0                # the QPs, SRQs and CQs of rxe0\n" +
			"  urmactl jetty ls -d siw0 -o wide        # with verbs types, states, ports and owners' names",
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			lsOpts.Warn = cmd.ErrOrStderr()
			return JettyList(cmd.OutOrStdout(), lsOpts)
		},
	}
	addOutputFlag(ls, &lsOpts.Output)
	addInspectFlags(ls, &lsOpts.InspectOptions)
	addDeviceFlag(ls, &lsOpts.Device)

	var decOpts JettyDecodeOptions
	dec := &cobra.Command{
		Use:   "decode [HEX|-]",
		Short: "Decode a marshalled JFR or Jetty descriptor (32 bytes) given in hex or on stdin",
		Example: "  urmactl jetty decode 0102...          # the descriptor's 64 hex digits\n" +
			"  some-program | urmactl jetty decode -   # its 32 bytes, or their hex, on stdin",
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := decodeInput(cmd, args)
			if err != nil {
				return err
			}
			decOpts.Input, decOpts.Stdin = in, cmd.InOrStdin()
			return JettyDecode(cmd.OutOrStdout(), decOpts)
		},
	}
	addOutputFlag(dec, &decOpts.Output)

	jc.AddCommand(ls, dec)
	return jc
}

// JettyList writes one row per JFS, JFR and Jetty of every live loopback
// context. Contexts that do not answer are reported to opts.Warn and skipped.
// With opts.Device naming an RDMA device, it writes that device's QPs,
// SRQs and CQs instead (see FormatIBJettyList).
func JettyList(w io.Writer, opts JettyListOptions) error {
	if err := checkOutput(orTable(opts.Output)); err != nil {
		return err
	}
	if isRDMADevice(opts.Device) {
		js, err := ibJetties(opts.InspectOptions, opts.Device)
		if err != nil {
			return err
		}
		return FormatIBJettyList(w, js, opts.Output)
	}
	ctxs, err := inspect(opts.InspectOptions)
	if err != nil {
		return err
	}
	js := []loopback.JettyInfo{}
	for _, ci := range ctxs {
		js = append(js, ci.Jetties...)
	}
	return FormatJettyList(w, js, opts.Output)
}

// FormatJettyList writes js in the given format. JSON is the list of
// loopback.JettyInfo, whose keys are stable.
func FormatJettyList(w io.Writer, js []loopback.JettyInfo, output string) error {
	output = orTable(output)
	if err := checkOutput(output); err != nil {
		return err
	}
	if output == OutputJSON {
		if js == nil {
			js = []loopback.JettyInfo{}
		}
		return writeJSON(w, js)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprint(tw, "EID\tUASID\tID\tKIND\tMODE\tSTATE\tDEPTH\tOUTSTANDING\tPID")
	if output == OutputWide {
		fmt.Fprint(tw, "\tFREE\tCOMMAND")
	}
	fmt.Fprintln(tw)
	for _, j := range js {
		// Every string came from the context's process: see safe.
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%d\t%d\t%d", safe(j.EID), j.UASID, j.ID, safe(j.Kind), safe(j.Mode),
			safe(j.State), j.Depth, j.Outstanding, j.OwnerPID)
		if output == OutputWide {
			fmt.Fprintf(tw, "\t%d\t%s", j.Depth-j.Outstanding, processName(j.OwnerPID))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// JettyDescInfo is the decoded form of a JFR or Jetty descriptor; its JSON
// keys are stable and match those of loopback.JettyInfo.
type JettyDescInfo struct {
	Kind        string `json:"kind"`
	ID          uint32 `json:"id"`
	EID         string `json:"eid"`
	UASID       uint32 `json:"uasid"`
	Mode        string `json:"mode"`
	TokenPolicy string `json:"token_policy"`
}

// JettyDescOf converts a descriptor to its printable form.
func JettyDescOf(d jetty.Descriptor) JettyDescInfo {
	return JettyDescInfo{Kind: d.Kind.String(), ID: d.ID.ID, EID: d.ID.EID.String(), UASID: d.ID.UASID,
		Mode: d.Mode.String(), TokenPolicy: d.TokenPolicy.String()}
}

// JettyDecode decodes the marshalled JFR or Jetty descriptor in opts.Input
// (or opts.Stdin) and writes its fields. Anything UnmarshalBinary rejects
// is an error that says why.
func JettyDecode(w io.Writer, opts JettyDecodeOptions) error {
	if err := checkOutput(orTable(opts.Output)); err != nil {
		return err
	}
	b, err := readDescriptor(opts.Input, opts.Stdin, jetty.DescriptorSize)
	if err != nil {
		return fmt.Errorf("jetty descriptor: %w", err)
	}
	var d jetty.Descriptor
	if err := d.UnmarshalBinary(b); err != nil {
		var sd segment.Descriptor
		if sd.UnmarshalBinary(b) == nil {
			return fmt.Errorf("%w (this is a segment descriptor: use urmactl segment decode)", err)
		}
		return err
	}
	info := JettyDescOf(d)
	return formatKV(w, info, opts.Output, []kv{
		{"kind", info.Kind}, {"id", info.ID}, {"eid", info.EID}, {"uasid", info.UASID},
		{"mode", info.Mode}, {"token_policy", info.TokenPolicy},
	})
}
