package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/urma-go/sdk/internal/termsafe"
	"github.com/urma-go/sdk/urma"
)

// DeviceListOptions configures DeviceList. The zero value lists every
// device as a table.
type DeviceListOptions struct {
	// Output is "table" (or empty), "wide" or "json".
	Output string
}

// DeviceShowOptions configures DeviceShow.
type DeviceShowOptions struct {
	// Name is the device to show.
	Name string
	// Output is "table" (or empty), "wide" or "json"; table and wide are the same.
	Output string
}

func newDeviceCmd() *cobra.Command {
	dev := newGroupCmd("device", []string{"dev"}, "List and show URMA devices")
	dev.Example = "  urmactl device ls\n  urmactl device show rxe0"

	var lsOpts DeviceListOptions
	ls := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List devices",
		Example: "  urmactl device ls\n  urmactl device ls -o wide\n  urmactl device ls -o json",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return DeviceList(cmd.OutOrStdout(), lsOpts)
		},
	}
	ls.Flags().StringVarP(&lsOpts.Output, "output", "o", OutputTable, "output format: table|wide|json")

	var showOpts DeviceShowOptions
	show := &cobra.Command{
		Use:               "show NAME",
		Short:             "Show every attribute of a device",
		Example:           "  urmactl device show loopback0\n  urmactl device show rxe0 -o json",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeDeviceArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			showOpts.Name = args[0]
			return DeviceShow(cmd.OutOrStdout(), showOpts)
		},
	}
	show.Flags().StringVarP(&showOpts.Output, "output", "o", OutputTable, "output format: table|wide|json")

	dev.AddCommand(ls, show)
	return dev
}

// DeviceInfo is the JSON form of a device; its keys are stable.
type DeviceInfo struct {
	Name        string             `json:"name"`
	Provider    string             `json:"provider"`
	Transport   urma.TransportType `json:"transport"`
	GUID        string             `json:"guid"`
	MaxJFC      int                `json:"max_jfc"`
	MaxJFS      int                `json:"max_jfs"`
	MaxJFR      int                `json:"max_jfr"`
	MaxJetty    int                `json:"max_jetty"`
	MaxJFCDepth int                `json:"max_jfc_depth"`
	MaxJFSDepth int                `json:"max_jfs_depth"`
	MaxJFRDepth int                `json:"max_jfr_depth"`
	MaxJFSSGE   int                `json:"max_jfs_sge"`
	MaxJFRSGE   int                `json:"max_jfr_sge"`
	MaxInline   int                `json:"max_inline"`
	MaxMsgSize  uint64             `json:"max_msg_size"`
	AtomicOps   []string           `json:"atomic_ops"`
	AtomicSize  int                `json:"atomic_size"`
	Modes       []string           `json:"modes"`
	MaxEIDs     int                `json:"max_eids"`
	// What the device declares about the rules of docs/semantics.md.
	MaxReadSGE      int    `json:"max_read_sge"`
	MaxUMMsgSize    uint64 `json:"max_um_msg_size"`
	ImmData         bool   `json:"imm_data"`
	RNR             bool   `json:"rnr"`
	RemoteStatus    bool   `json:"remote_status"`
	SolicitedEvents bool   `json:"solicited_events"`
	SolicitedInCR   bool   `json:"solicited_in_cr"`
	// How view.View runs: "software" or "offload", and whether the
	// device could offload signatures (mlx5).
	Views      string     `json:"views"`
	SigOffload bool       `json:"sig_offload"`
	Ports      []PortInfo `json:"ports"`
	EIDs       []EIDInfo  `json:"eids"`
	// The queue knobs the device honours.
	RxThreshold  bool   `json:"rx_threshold"`
	ErrorSuspend bool   `json:"error_suspend"`
	ErrTimeout   bool   `json:"err_timeout"`
	OrderCap     string `json:"order_cap"`
	// Optional operations: mapped imports, SEND_INVALIDATE, WRITE_NOTIFY.
	MapImports     bool `json:"map_imports"`
	SendInvalidate bool `json:"send_invalidate"`
	WriteNotify    bool `json:"write_notify"`
	// Jetty groups: how many, and how many Jetties in one.
	MaxJettyGroups    int `json:"max_jetty_grp"`
	MaxJettiesInGroup int `json:"max_jetty_in_grp"`
}

// PortInfo is the JSON form of a port.
type PortInfo struct {
	Port      int    `json:"port"`
	State     string `json:"state"`
	MTU       int    `json:"mtu"`
	SpeedMbps uint64 `json:"speed_mbps"`
}

// EIDInfo is the JSON form of an EID table entry.
type EIDInfo struct {
	Index int    `json:"index"`
	EID   string `json:"eid"`
}

// Info converts a device to its JSON form.
func Info(d *urma.Device) DeviceInfo {
	a := d.Attr()
	info := DeviceInfo{
		Name: d.Name(), Provider: d.Provider(), Transport: a.Transport,
		GUID:   formatGUID(a.GUID),
		MaxJFC: a.MaxJFC, MaxJFS: a.MaxJFS, MaxJFR: a.MaxJFR, MaxJetty: a.MaxJetty,
		MaxJFCDepth: a.MaxJFCDepth, MaxJFSDepth: a.MaxJFSDepth, MaxJFRDepth: a.MaxJFRDepth,
		MaxJFSSGE: a.MaxJFSSGE, MaxJFRSGE: a.MaxJFRSGE, MaxInline: a.MaxInline,
		MaxMsgSize: a.MaxMsgSize, AtomicOps: atomicList(a.AtomicOps), AtomicSize: a.AtomicSize,
		Modes: modeList(a.Modes), MaxEIDs: a.MaxEIDs,
		MaxReadSGE: a.MaxReadSGE, MaxUMMsgSize: a.MaxUMMsgSize, ImmData: a.ImmData, RNR: a.RNR,
		RemoteStatus: a.RemoteStatus, SolicitedEvents: a.SolicitedEvents, SolicitedInCR: a.SolicitedInCR,
		Views: a.Views.String(), SigOffload: a.SigOffload,
		Ports: []PortInfo{}, EIDs: []EIDInfo{},
	}
	info.RxThreshold, info.ErrorSuspend, info.ErrTimeout, info.OrderCap = a.RxThreshold, a.ErrorSuspend, a.ErrTimeout, a.OrderCap.String()
	info.MapImports, info.SendInvalidate, info.WriteNotify = a.MapImports, a.SendInvalidate, a.WriteNotify
	info.MaxJettyGroups, info.MaxJettiesInGroup = a.MaxJettyGroups, a.MaxJettiesInGroup
	for i, p := range a.Ports {
		info.Ports = append(info.Ports, PortInfo{Port: i + 1, State: p.State.String(), MTU: p.MTU, SpeedMbps: p.SpeedMbps})
	}
	for i, e := range d.EIDs() {
		info.EIDs = append(info.EIDs, EIDInfo{Index: i, EID: e.String()})
	}
	return info
}

// formatGUID prints a GUID as ibv_devinfo does: four groups of four hex digits.
func formatGUID(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

// atomicList names the atomic opcodes of a set, in opcode order.
func atomicList(a urma.AtomicOps) []string {
	out := []string{}
	for op := urma.OpCAS; op <= urma.OpFXor; op++ {
		if a.Has(op) {
			out = append(out, op.String())
		}
	}
	return out
}

// modeList names the transport modes of a set.
func modeList(m urma.TransportMode) []string {
	out := []string{}
	for _, mode := range []urma.TransportMode{urma.RM, urma.RC, urma.UM} {
		if m&mode != 0 {
			out = append(out, mode.String())
		}
	}
	return out
}

// joinOr joins names with sep, or returns "none" for an empty list.
func joinOr(names []string, sep string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, sep)
}

// portsState summarises the ports' states: the common state, or a list.
func portsState(ports []PortInfo) string {
	if len(ports) == 0 {
		return "-"
	}
	states := make([]string, len(ports))
	same := true
	for i, p := range ports {
		states[i] = p.State
		same = same && p.State == ports[0].State
	}
	if same {
		return states[0]
	}
	return strings.Join(states, ",")
}

// FormatDeviceList writes devs in the given format.
func FormatDeviceList(w io.Writer, devs []DeviceInfo, output string) error {
	if output == "" {
		output = OutputTable
	}
	if err := checkOutput(output); err != nil {
		return err
	}
	if output == OutputJSON {
		if devs == nil {
			devs = []DeviceInfo{}
		}
		return writeJSON(w, devs)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	if output == OutputWide {
		fmt.Fprintln(tw, "NAME\tPROVIDER\tTRANSPORT\tEIDS\tPORTS\tSTATE\tMAX_MSG\tATOMICS\tMODES")
	} else {
		fmt.Fprintln(tw, "NAME\tPROVIDER\tTRANSPORT\tEIDS\tPORTS\tSTATE")
	}
	for _, d := range devs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s", safe(d.Name), safe(d.Provider), safe(d.Transport.String()),
			len(d.EIDs), len(d.Ports), safe(portsState(d.Ports)))
		if output == OutputWide {
			fmt.Fprintf(tw, "\t%d\t%s\t%s", d.MaxMsgSize, safe(joinOr(d.AtomicOps, ",")), safe(joinOr(d.Modes, ",")))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// FormatDevice writes every attribute of one device: "key: value" lines in
// the spirit of ibv_devinfo, then a port table and an EID table.
func FormatDevice(w io.Writer, d DeviceInfo, output string) error {
	if output == "" {
		output = OutputTable
	}
	if err := checkOutput(output); err != nil {
		return err
	}
	if output == OutputJSON {
		return writeJSON(w, d)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
	kv := []struct {
		k string
		v any
	}{
		{"name", d.Name}, {"provider", d.Provider}, {"transport", d.Transport}, {"guid", d.GUID},
		{"max_jfc", d.MaxJFC}, {"max_jfs", d.MaxJFS}, {"max_jfr", d.MaxJFR}, {"max_jetty", d.MaxJetty},
		{"max_jfc_depth", d.MaxJFCDepth}, {"max_jfs_depth", d.MaxJFSDepth}, {"max_jfr_depth", d.MaxJFRDepth},
		{"max_jfs_sge", d.MaxJFSSGE}, {"max_jfr_sge", d.MaxJFRSGE}, {"max_inline", d.MaxInline},
		{"max_msg_size", d.MaxMsgSize}, {"atomic_ops", joinOr(d.AtomicOps, ",")}, {"atomic_size", d.AtomicSize},
		{"modes", joinOr(d.Modes, ",")}, {"max_eids", d.MaxEIDs},
		{"max_read_sge", d.MaxReadSGE}, {"max_um_msg_size", d.MaxUMMsgSize}, {"imm_data", d.ImmData},
		{"rnr", d.RNR}, {"remote_status", d.RemoteStatus}, {"solicited_events", d.SolicitedEvents},
		{"solicited_in_cr", d.SolicitedInCR}, {"views", d.Views}, {"sig_offload", d.SigOffload},
		{"rx_threshold", d.RxThreshold}, {"error_suspend", d.ErrorSuspend}, {"err_timeout", d.ErrTimeout},
		{"order_cap", d.OrderCap},
		{"map_imports", d.MapImports}, {"send_invalidate", d.SendInvalidate}, {"write_notify", d.WriteNotify},
		{"max_jetty_grp", d.MaxJettyGroups}, {"max_jetty_in_grp", d.MaxJettiesInGroup},
	}
	for _, e := range kv {
		fmt.Fprintf(tw, "%s:\t%s\n", e.k, safe(fmt.Sprint(e.v)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "PORT\tSTATE\tMTU\tSPEED")
	for _, p := range d.Ports {
		speed := "-"
		if p.SpeedMbps != 0 {
			speed = fmt.Sprintf("%d Mb/s", p.SpeedMbps)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", p.Port, safe(p.State), p.MTU, speed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "INDEX\tEID")
	for _, e := range d.EIDs {
		fmt.Fprintf(tw, "%d\t%s\n", e.Index, safe(e.EID))
	}
	return tw.Flush()
}

// writeJSON writes v as indented JSON. encoding/json escapes the C0
// controls in strings but leaves DEL, the C1 controls and format
// characters raw, which a terminal may act on as on an escape sequence:
// termsafe.JSON escapes those too, and the values decode the same.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(termsafe.JSON(b), '\n'))
	return err
}

// DeviceList writes the devices of every registered provider.
func DeviceList(w io.Writer, opts DeviceListOptions) error {
	if err := checkOutput(orTable(opts.Output)); err != nil {
		return err
	}
	devs, err := urma.Devices()
	if err != nil {
		return err
	}
	infos := make([]DeviceInfo, len(devs))
	for i, d := range devs {
		infos[i] = Info(d)
	}
	return FormatDeviceList(w, infos, opts.Output)
}

// DeviceShow writes every attribute of the device opts.Name.
func DeviceShow(w io.Writer, opts DeviceShowOptions) error {
	if err := checkOutput(orTable(opts.Output)); err != nil {
		return err
	}
	d, err := urma.DeviceByName(opts.Name)
	if err != nil {
		if errors.Is(err, urma.ErrNotFound) {
			return fmt.Errorf("%w (see urmactl device ls)", err)
		}
		return err
	}
	return FormatDevice(w, Info(d), opts.Output)
}

func orTable(o string) string {
	if o == "" {
		return OutputTable
	}
	return o
}
