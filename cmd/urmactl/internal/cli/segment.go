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

// SegmentListOptions configures SegmentList. The zero value lists the
// segments of every context in loopback.RuntimeDir() as a table.
type SegmentListOptions struct {
	InspectOptions
	// Output is "table" (or empty), "wide" or "json".
	Output string

	// Device, when it names an RDMA device (anything but "" and
	// loopback.DeviceName), lists that device's memory regions from the
	// kernel instead, as IBSegmentInfo; Dir is then unused and Timeout
	// bounds the kernel's answer.
	Device string
}

// SegmentDecodeOptions configures SegmentDecode.
type SegmentDecodeOptions struct {
	// Input is the descriptor in hex; "" or "-" reads Stdin instead.
	Input string
	// Stdin holds the descriptor, as hex text or as the 48 raw bytes.
	Stdin io.Reader
	// Output is "table" (or empty), "wide" or "json"; table and wide are the same.
	Output string
}

func newSegmentCmd() *cobra.Command {
	seg := newGroupCmd("segment", []string{"seg"}, "List live segments and decode segment descriptors")
	seg.Example = "  urmactl segment ls\n  urmactl segment ls -d rxe0\n  urmactl segment decode 0102...   # 96 hex digits"

	var lsOpts SegmentListOptions
	ls := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the segments of every live loopback context, or of an RDMA device",
		Long: "Without -d (or with -d " + loopback.DeviceName + "), list the segments of every live loopback\n" +
			"context on this host. With -d and an RDMA device, list the memory regions the\n" +
			"kernel holds on that device for every process (RDMA netlink, as rdma resource\n" +
			"show mr): their lengths, owners and, for root (CAP_NET_ADMIN), their keys.",
		Example: "  urmactl segment ls\n  urmactl seg ls -o wide --timeout 500ms\n  urmactl segment ls -o json\n" +
			"  urmactl segment ls -d rxe0              # the memory regions of rxe0\n" +
			"  urmactl seg ls -d siw0 -o json",
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			lsOpts.Warn = cmd.ErrOrStderr()
			return SegmentList(cmd.OutOrStdout(), lsOpts)
		},
	}
	addOutputFlag(ls, &lsOpts.Output)
	addInspectFlags(ls, &lsOpts.InspectOptions)
	addDeviceFlag(ls, &lsOpts.Device)

	var decOpts SegmentDecodeOptions
	dec := &cobra.Command{
		Use:   "decode [HEX|-]",
		Short: "Decode a marshalled segment descriptor (48 bytes) given in hex or on stdin",
		Example: "  urmactl segment decode 0102...          # the descriptor's 96 hex digits\n" +
			"  some-program | urmactl segment decode -   # its 48 bytes, or their hex, on stdin",
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := decodeInput(cmd, args)
			if err != nil {
				return err
			}
			decOpts.Input, decOpts.Stdin = in, cmd.InOrStdin()
			return SegmentDecode(cmd.OutOrStdout(), decOpts)
		},
	}
	addOutputFlag(dec, &decOpts.Output)

	seg.AddCommand(ls, dec)
	return seg
}

// SegmentList writes one row per segment of every live loopback context.
// Contexts that do not answer are reported to opts.Warn and skipped.
// With opts.Device naming an RDMA device, it writes that device's memory
// regions instead (see FormatIBSegmentList).
func SegmentList(w io.Writer, opts SegmentListOptions) error {
	if err := checkOutput(orTable(opts.Output)); err != nil {
		return err
	}
	if isRDMADevice(opts.Device) {
		segs, err := ibSegments(opts.InspectOptions, opts.Device)
		if err != nil {
			return err
		}
		return FormatIBSegmentList(w, segs, opts.Output)
	}
	ctxs, err := inspect(opts.InspectOptions)
	if err != nil {
		return err
	}
	segs := []loopback.SegmentInfo{}
	for _, ci := range ctxs {
		segs = append(segs, ci.Segments...)
	}
	return FormatSegmentList(w, segs, opts.Output)
}

// FormatSegmentList writes segs in the given format. JSON is the list of
// loopback.SegmentInfo, whose keys are stable.
func FormatSegmentList(w io.Writer, segs []loopback.SegmentInfo, output string) error {
	output = orTable(output)
	if err := checkOutput(output); err != nil {
		return err
	}
	if output == OutputJSON {
		if segs == nil {
			segs = []loopback.SegmentInfo{}
		}
		return writeJSON(w, segs)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprint(tw, "EID\tUASID\tVA\tLEN\tACCESS\tTOKEN\tMEMORY\tPID")
	if output == OutputWide {
		fmt.Fprint(tw, "\tEND\tCOMMAND")
	}
	fmt.Fprintln(tw)
	for _, s := range segs {
		// Every string came from the context's process: see safe.
		fmt.Fprintf(tw, "%s\t%d\t%#x\t%d\t%s\t%s/%d\t%s\t%d", safe(s.EID), s.UASID, s.VA, s.Len, safe(s.Access),
			safe(s.TokenPolicy), s.TokenID, safe(s.Memory), s.OwnerPID)
		if output == OutputWide {
			fmt.Fprintf(tw, "\t%#x\t%s", s.VA+s.Len, processName(s.OwnerPID))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// SegmentDescInfo is the decoded form of a segment descriptor; its JSON
// keys are stable and match those of loopback.SegmentInfo.
type SegmentDescInfo struct {
	EID         string `json:"eid"`
	UASID       uint32 `json:"uasid"`
	VA          uint64 `json:"va"`
	Len         uint64 `json:"len"`
	Access      string `json:"access"`
	TokenPolicy string `json:"token_policy"`
	TokenID     uint32 `json:"token_id"`
}

// SegmentDescOf converts a descriptor to its printable form.
func SegmentDescOf(d segment.Descriptor) SegmentDescInfo {
	return SegmentDescInfo{EID: d.EID.String(), UASID: d.UASID, VA: d.VA, Len: d.Len,
		Access: d.Access.String(), TokenPolicy: d.TokenPolicy.String(), TokenID: d.TokenID}
}

// SegmentDecode decodes the marshalled segment descriptor in opts.Input (or
// opts.Stdin) and writes its fields. Anything UnmarshalBinary rejects is an
// error that says why.
func SegmentDecode(w io.Writer, opts SegmentDecodeOptions) error {
	if err := checkOutput(orTable(opts.Output)); err != nil {
		return err
	}
	b, err := readDescriptor(opts.Input, opts.Stdin, segment.DescriptorSize)
	if err != nil {
		return fmt.Errorf("segment descriptor: %w", err)
	}
	var d segment.Descriptor
	if err := d.UnmarshalBinary(b); err != nil {
		var jd jetty.Descriptor
		if jd.UnmarshalBinary(b) == nil {
			return fmt.Errorf("%w (this is a %v descriptor: use urmactl jetty decode)", err, jd.Kind)
		}
		return err
	}
	info := SegmentDescOf(d)
	return formatKV(w, info, opts.Output, []kv{
		{"eid", info.EID}, {"uasid", info.UASID}, {"va", fmt.Sprintf("%#x", info.VA)}, {"len", info.Len},
		{"access", info.Access}, {"token_policy", info.TokenPolicy}, {"token_id", info.TokenID},
	})
}
