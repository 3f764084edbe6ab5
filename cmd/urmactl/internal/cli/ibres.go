package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urma-go/sdk/internal/rdmanl"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback"
)

// jetty ls -d and segment ls -d with an RDMA device name read the device's
// objects from the kernel (RDMA netlink, as iproute2's rdma resource show
// does) rather than from the SDK: the kernel sees every process's queues
// and regions, and the kernel's own, whichever library made them. They are
// named as the ib provider maps URMA onto verbs (see provider/ib): a QP is
// a Jetty (the provider's JFSs and Jetties are QPs, one per remote in RM
// mode, and a UM JFR receives on a UD QP), a CQ a JFC, an SRQ a JFR and an
// MR a segment.

// IBJettyInfo is a QP, CQ or SRQ of an RDMA device, as jetty ls -d lists
// it. Its JSON keys are stable.
type IBJettyInfo struct {
	Device string `json:"device"`
	// ID is the QP, CQ or SRQ number.
	ID uint32 `json:"id"`
	// Kind is JETTY for a QP, JFC for a CQ, JFR for an SRQ.
	Kind string `json:"kind"`
	// Verbs is the verbs object: QP, CQ or SRQ.
	Verbs string `json:"verbs"`
	// Mode is a QP's transport in URMA's words: RC for RC, UM for UD, and
	// the verbs name of any other type (GSI, UC ...). Empty for CQs and
	// SRQs.
	Mode string `json:"mode"`
	// Type is the verbs type: a QP's (RC, UD, GSI ...) or an SRQ's
	// (BASIC, XRC, TM). Empty for CQs.
	Type string `json:"type"`
	// State is a QP's state in URMA's words: READY (RTS), SUSPENDED
	// (SQD), ERROR (SQE, ERR) or RESET (RESET, INIT, RTR: not yet able to
	// send). VerbsState is the verbs name. Both are empty for CQs and SRQs,
	// whose state the kernel does not report.
	State      string `json:"state"`
	VerbsState string `json:"verbs_state"`
	// Depth is a CQ's number of entries; 0 for QPs and SRQs, whose depths
	// the kernel does not report.
	Depth uint32 `json:"depth"`
	// Port is a QP's port, 0 before the QP is bound to one.
	Port uint32 `json:"port"`
	// RemoteID is a connected (RC or UC) QP's peer QP number, where the
	// device knows it (iWARP devices do not).
	RemoteID *uint32 `json:"remote_id,omitempty"`
	// PD is the protection domain's number (0 for the kernel's objects).
	PD uint32 `json:"pd"`
	// Users is how many QPs and SRQs report to a CQ.
	Users uint64 `json:"users"`
	// QPs lists the QPs that receive through an SRQ, as ranges: "17-19,23".
	QPs string `json:"qps,omitempty"`
	// OwnerPID is the process that made the object, 0 for the kernel's
	// own, which Kernel then names (ib_core, rdma_cm ...). OwnerTID is the
	// thread that the kernel names (see rdmanl.Owner); OwnerPID is that
	// thread where its process is unknown.
	OwnerPID int    `json:"owner_pid"`
	OwnerTID int    `json:"owner_tid"`
	Kernel   string `json:"kernel,omitempty"`
}

// IBSegmentInfo is a memory region of an RDMA device, as segment ls -d
// lists it. Its JSON keys are stable.
type IBSegmentInfo struct {
	Device string `json:"device"`
	// ID is the MR number.
	ID  uint32 `json:"id"`
	Len uint64 `json:"len"`
	// RKey and LKey are the MR's keys (the rkey is what a peer's token id
	// names); only a caller with CAP_NET_ADMIN gets them, others see null.
	RKey     *uint32 `json:"rkey"`
	LKey     *uint32 `json:"lkey"`
	PD       uint32  `json:"pd"`
	OwnerPID int     `json:"owner_pid"`
	OwnerTID int     `json:"owner_tid"`
	Kernel   string  `json:"kernel,omitempty"`
}

// isRDMADevice reports whether dev names a device that jetty ls and
// segment ls read from RDMA netlink: any name but "" and the loopback
// device's.
func isRDMADevice(dev string) bool { return dev != "" && dev != loopback.DeviceName }

// ibConn opens RDMA netlink and finds dev on it.
func ibConn(ctx context.Context, dev string) (*rdmanl.Conn, rdmanl.Device, error) {
	c, err := rdmanl.Dial()
	if err != nil {
		return nil, rdmanl.Device{}, fmt.Errorf("device %s: %w", safe(dev), err)
	}
	d, err := c.DeviceByName(ctx, dev)
	if err != nil {
		c.Close()
		if errors.Is(err, rdmanl.ErrNoDevice) {
			return nil, d, usage(fmt.Errorf("%w; %s lists the loopback contexts", err, loopback.DeviceName))
		}
		return nil, d, err
	}
	return c, d, nil
}

// ibContext bounds the netlink exchanges of one listing by opts.Timeout.
func ibContext(opts InspectOptions) (context.Context, context.CancelFunc, error) {
	if opts.Timeout < 0 {
		return nil, nil, fmt.Errorf("invalid timeout %v (want > 0)", opts.Timeout)
	}
	t := opts.Timeout
	if t == 0 {
		t = DefaultInspectTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), t)
	return ctx, cancel, nil
}

// ibJetties lists the QPs, SRQs and CQs of the RDMA device dev. A kernel
// that cannot list SRQs is reported to opts.Warn and the rest is listed.
func ibJetties(opts InspectOptions, dev string) ([]IBJettyInfo, error) {
	ctx, cancel, err := ibContext(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	c, d, err := ibConn(ctx, dev)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	qps, err := c.QPs(ctx, d)
	if err != nil {
		return nil, err
	}
	srqs, err := c.SRQs(ctx, d)
	if errors.Is(err, provider.ErrNotSupported) {
		fmt.Fprintf(warnOf(opts), "urmactl: warning: %v; the list has no JFRs\n", err)
	} else if err != nil {
		return nil, err
	}
	cqs, err := c.CQs(ctx, d)
	if err != nil {
		return nil, err
	}
	return ibJettiesOf(d.Name, qps, srqs, cqs), nil
}

// ibSegments lists the MRs of the RDMA device dev.
func ibSegments(opts InspectOptions, dev string) ([]IBSegmentInfo, error) {
	ctx, cancel, err := ibContext(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	c, d, err := ibConn(ctx, dev)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	mrs, err := c.MRs(ctx, d)
	if err != nil {
		return nil, err
	}
	return ibSegmentsOf(d.Name, mrs), nil
}

// ibJettiesOf names a device's QPs, SRQs and CQs in URMA's words, QPs
// first, each kind in the kernel's order.
func ibJettiesOf(dev string, qps []rdmanl.QP, srqs []rdmanl.SRQ, cqs []rdmanl.CQ) []IBJettyInfo {
	out := make([]IBJettyInfo, 0, len(qps)+len(srqs)+len(cqs))
	for _, q := range qps {
		j := IBJettyInfo{Device: dev, ID: q.QPN, Kind: "JETTY", Verbs: "QP", Mode: qpMode(q.Type),
			Type: q.Type.String(), State: qpState(q.State), VerbsState: q.State.String(), Port: q.Port,
			PD: q.PDN, OwnerPID: processOf(q.Owner), OwnerTID: int(q.PID), Kernel: q.Kernel}
		// QP 0 is never a peer: iWARP devices, which carry no QP
		// numbers, report 0.
		if q.HasRemote && q.RemoteQPN != 0 {
			r := q.RemoteQPN
			j.RemoteID = &r
		}
		out = append(out, j)
	}
	for _, s := range srqs {
		out = append(out, IBJettyInfo{Device: dev, ID: s.SRQN, Kind: "JFR", Verbs: "SRQ", Type: srqType(s.Type),
			PD: s.PDN, QPs: qpRanges(s.QPs), OwnerPID: processOf(s.Owner), OwnerTID: int(s.PID), Kernel: s.Kernel})
	}
	for _, c := range cqs {
		out = append(out, IBJettyInfo{Device: dev, ID: c.CQN, Kind: "JFC", Verbs: "CQ", Depth: c.CQE,
			Users: c.Users, OwnerPID: processOf(c.Owner), OwnerTID: int(c.PID), Kernel: c.Kernel})
	}
	return out
}

// ibSegmentsOf names a device's MRs as segments.
func ibSegmentsOf(dev string, mrs []rdmanl.MR) []IBSegmentInfo {
	out := make([]IBSegmentInfo, 0, len(mrs))
	for _, m := range mrs {
		s := IBSegmentInfo{Device: dev, ID: m.MRN, Len: m.Len, PD: m.PDN, OwnerPID: processOf(m.Owner),
			OwnerTID: int(m.PID), Kernel: m.Kernel}
		if m.HasKeys {
			r, l := m.RKey, m.LKey
			s.RKey, s.LKey = &r, &l
		}
		out = append(out, s)
	}
	return out
}

// processOf is the owner's process, or the kernel's thread ID where the
// process is unknown.
func processOf(o rdmanl.Owner) int {
	if o.Process != 0 {
		return int(o.Process)
	}
	return int(o.PID)
}

// qpMode is URMA's transport mode of a QP type.
func qpMode(t rdmanl.QPType) string {
	switch t {
	case rdmanl.QPTypeRC:
		return "RC"
	case rdmanl.QPTypeUD:
		return "UM"
	}
	return t.String()
}

// qpState is URMA's jetty state of a QP state.
func qpState(s rdmanl.QPState) string {
	switch s {
	case rdmanl.QPStateReset, rdmanl.QPStateInit, rdmanl.QPStateRTR:
		return "RESET"
	case rdmanl.QPStateRTS:
		return "READY"
	case rdmanl.QPStateSQD:
		return "SUSPENDED"
	case rdmanl.QPStateSQE, rdmanl.QPStateErr:
		return "ERROR"
	}
	return s.String()
}

// srqType names enum ib_srq_type.
func srqType(t uint8) string {
	switch t {
	case 0:
		return "BASIC"
	case 1:
		return "XRC"
	case 2:
		return "TM"
	}
	return "TYPE_" + strconv.Itoa(int(t))
}

// qpRanges prints QP ranges as "17-19,23".
func qpRanges(rs []rdmanl.QPRange) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.FormatUint(uint64(r.First), 10)
		if r.Last != r.First {
			parts[i] += "-" + strconv.FormatUint(uint64(r.Last), 10)
		}
	}
	return strings.Join(parts, ",")
}

// FormatIBJettyList writes js in the given format. JSON is the list of
// IBJettyInfo.
func FormatIBJettyList(w io.Writer, js []IBJettyInfo, output string) error {
	output = orTable(output)
	if err := checkOutput(output); err != nil {
		return err
	}
	if output == OutputJSON {
		if js == nil {
			js = []IBJettyInfo{}
		}
		return writeJSON(w, js)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprint(tw, "DEVICE\tID\tKIND\tMODE\tSTATE\tDEPTH\tPID")
	if output == OutputWide {
		fmt.Fprint(tw, "\tVERBS\tTYPE\tVERBS_STATE\tPORT\tREMOTE\tPD\tUSERS\tQPS\tCOMMAND")
	}
	fmt.Fprintln(tw)
	for _, j := range js {
		// Names came from the kernel and from processes: see safe.
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s", safe(j.Device), j.ID, j.Kind, dash(j.Mode), dash(j.State),
			dashNum(uint64(j.Depth)), ownerPID(j.OwnerPID, j.Kernel))
		if output == OutputWide {
			remote := "-"
			if j.RemoteID != nil {
				remote = strconv.FormatUint(uint64(*j.RemoteID), 10)
			}
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", j.Verbs, dash(j.Type), dash(j.VerbsState),
				dashNum(uint64(j.Port)), remote, dashNum(uint64(j.PD)), usersOf(j), dash(j.QPs), ownerName(j.OwnerPID, j.Kernel))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// FormatIBSegmentList writes segs in the given format. JSON is the list
// of IBSegmentInfo.
func FormatIBSegmentList(w io.Writer, segs []IBSegmentInfo, output string) error {
	output = orTable(output)
	if err := checkOutput(output); err != nil {
		return err
	}
	if output == OutputJSON {
		if segs == nil {
			segs = []IBSegmentInfo{}
		}
		return writeJSON(w, segs)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprint(tw, "DEVICE\tID\tLEN\tRKEY\tPID")
	if output == OutputWide {
		fmt.Fprint(tw, "\tLKEY\tPD\tCOMMAND")
	}
	fmt.Fprintln(tw)
	for _, s := range segs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s", safe(s.Device), s.ID, s.Len, hexKey(s.RKey), ownerPID(s.OwnerPID, s.Kernel))
		if output == OutputWide {
			fmt.Fprintf(tw, "\t%s\t%s\t%s", hexKey(s.LKey), dashNum(uint64(s.PD)), ownerName(s.OwnerPID, s.Kernel))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func dashNum(n uint64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatUint(n, 10)
}

func hexKey(k *uint32) string {
	if k == nil {
		return "-"
	}
	return fmt.Sprintf("%#x", *k)
}

// usersOf is a CQ's user count; QPs and SRQs have none.
func usersOf(j IBJettyInfo) string {
	if j.Verbs != "CQ" {
		return "-"
	}
	return strconv.FormatUint(j.Users, 10)
}

// ownerPID is the PID column: "-" for the kernel's own objects.
func ownerPID(pid int, kernel string) string {
	if pid == 0 && kernel != "" {
		return "-"
	}
	return strconv.Itoa(pid)
}

// ownerName is the COMMAND column: the process's name, or the kernel
// owner's in brackets as ps prints kernel threads.
func ownerName(pid int, kernel string) string {
	if pid == 0 && kernel != "" {
		return "[" + safe(kernel) + "]"
	}
	return processName(pid)
}

// warnOf is where a listing's warnings go.
func warnOf(opts InspectOptions) io.Writer {
	if opts.Warn == nil {
		return os.Stderr
	}
	return opts.Warn
}
