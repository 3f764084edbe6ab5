package urma

import (
	"fmt"
	"net/netip"

	"github.com/urma-go/sdk/provider"
)

// EID is a 16-byte endpoint identifier (urma_eid_t) in IPv6 text form;
// IPv4 addresses map to ::ffff:a.b.c.d.
type EID [16]byte

// ParseEID parses an EID from IPv6 or IPv4 text.
func ParseEID(s string) (EID, error) {
	e, err := provider.ParseEID(s)
	return EID(e), err
}

// EIDFromAddr is the EID of an IP address.
func EIDFromAddr(a netip.Addr) EID { return EID(a.As16()) }

// Addr is the EID as an IPv6 address.
func (e EID) Addr() netip.Addr { return netip.AddrFrom16(e) }

// IsIPv4Mapped reports whether the EID is an IPv4 address mapped to IPv6.
func (e EID) IsIPv4Mapped() bool { return e.Addr().Is4In6() }

// IsZero reports whether the EID is all zeros.
func (e EID) IsZero() bool { return e == EID{} }

// String is the IPv6 text form.
func (e EID) String() string { return e.Addr().String() }

// MarshalText is the String form.
func (e EID) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText parses IPv6 or IPv4 text.
func (e *EID) UnmarshalText(b []byte) error {
	v, err := ParseEID(string(b))
	if err != nil {
		return err
	}
	*e = v
	return nil
}

// JettyID names a JFS, JFR or Jetty: {eid, uasid, id} as urma_jetty_id_t.
type JettyID struct {
	EID   EID
	UASID uint32
	ID    uint32
}

// String is "eid/uasid/id".
func (j JettyID) String() string { return fmt.Sprintf("%v/%d/%d", j.EID, j.UASID, j.ID) }

// JettyIDOf converts the provider's form.
func JettyIDOf(p provider.JettyID) JettyID { return JettyID{EID: EID(p.EID), UASID: p.UASID, ID: p.ID} }

// Raw is the provider's form.
func (j JettyID) Raw() provider.JettyID {
	return provider.JettyID{EID: provider.EID(j.EID), UASID: j.UASID, ID: j.ID}
}

// AtomicOps is the set of atomic opcodes a device executes: bit
// (op - OpCAS) per opcode, as urma_atomic_feature_t.
type AtomicOps uint16

// AtomicOpsOf builds the set from opcodes.
func AtomicOpsOf(ops ...Opcode) AtomicOps {
	var a AtomicOps
	for _, op := range ops {
		a |= AtomicOps(provider.AtomicOpsOf(provider.Opcode(op)))
	}
	return a
}

// Has reports whether op is in the set.
func (a AtomicOps) Has(op Opcode) bool { return provider.AtomicOps(a).Has(provider.Opcode(op)) }

// String lists the opcodes.
func (a AtomicOps) String() string { return provider.AtomicOps(a).String() }

// PortState is the state of a device port (urma_port_state_t).
type PortState uint8

// Port states.
const (
	PortNoState     PortState = 0
	PortDown        PortState = 1
	PortInit        PortState = 2
	PortArmed       PortState = 3
	PortActive      PortState = 4
	PortActiveDefer PortState = 5
)

// String returns the state's name.
func (s PortState) String() string { return provider.PortState(s).String() }

// PortAttr describes one port of a device.
type PortAttr struct {
	State PortState
	// MTU is the active MTU in bytes.
	MTU int
	// SpeedMbps is the active speed, 0 when not meaningful (loopback).
	SpeedMbps uint64
}

// TransportType is a device's transport, with the values of
// urma_transport_type_t; the transports UMDK does not define are
// extensions numbered from 0x100.
type TransportType int

// Transport types.
const (
	TransportInvalid TransportType = -1
	// TransportUB is UnifiedBus, UMDK's own transport.
	TransportUB TransportType = 0
	// TransportLoopback is this SDK's shared-memory provider.
	TransportLoopback TransportType = 0x100
	// TransportIB, TransportRoCE and TransportIWARP are verbs devices.
	TransportIB    TransportType = 0x101
	TransportRoCE  TransportType = 0x102
	TransportIWARP TransportType = 0x103
)

// String returns "UB", "loopback", "InfiniBand", "RoCE" or "iWARP".
func (t TransportType) String() string { return provider.TransportType(t).String() }

// MarshalText is the String form, so that JSON shows a name.
func (t TransportType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses what MarshalText wrote.
func (t *TransportType) UnmarshalText(b []byte) error {
	var p provider.TransportType
	if err := p.UnmarshalText(b); err != nil {
		return err
	}
	*t = TransportType(p)
	return nil
}

// ViewPath is how a device runs view.View transfers.
type ViewPath uint8

// View paths.
const (
	// ViewSoftware moves a view's data through a bounce segment, gathered,
	// scattered and signed by the CPU.
	ViewSoftware ViewPath = 0
	// ViewOffload lets the device do it with UMR memory keys (mlx5).
	ViewOffload ViewPath = 1
)

// String returns "software" or "offload".
func (v ViewPath) String() string { return provider.ViewPath(v).String() }

// DeviceAttr holds a device's capabilities (the part of urma_device_attr_t
// that applies to every provider).
type DeviceAttr struct {
	// Transport is how the device reaches its peers.
	Transport TransportType
	GUID      uint64
	MaxJFC    int
	MaxJFS    int
	MaxJFR    int
	MaxJetty  int
	// MaxJFCDepth, MaxJFSDepth and MaxJFRDepth bound the queue depths.
	MaxJFCDepth int
	MaxJFSDepth int
	MaxJFRDepth int
	// MaxJFSSGE and MaxJFRSGE bound the SGEs per send and receive request.
	MaxJFSSGE int
	MaxJFRSGE int
	// MaxReadSGE bounds the local SGEs a READ scatters into (verbs
	// max_sge_rd; 1 on soft-iWARP).
	MaxReadSGE int
	// MaxInline is the largest Inline payload (jetty.Inline).
	MaxInline int
	// MaxMsgSize is the largest message or one-sided transfer.
	MaxMsgSize uint64
	// MaxUMMsgSize is the largest UM message: a datagram is one packet on
	// verbs devices (UD), so the port's MTU; MaxMsgSize on loopback.
	MaxUMMsgSize uint64
	// AtomicOps lists the atomic opcodes, AtomicSize their operand size in bytes.
	AtomicOps  AtomicOps
	AtomicSize int
	// Modes is the set of transport modes (RM|RC|UM).
	Modes TransportMode
	// MaxEIDs is the size of the EID table.
	MaxEIDs int
	// ImmData reports that WRITE_IMM and SEND_IMM exist; iWARP has no
	// immediate data, and Post refuses them with ErrNotSupported.
	ImmData bool
	// RNR reports that a SEND finding no receive posted waits and retries
	// (JFSConfig.RNRRetry, RNRTimeout). Without it (iWARP) such a SEND
	// fails the connection: the request completes with an error and the
	// queue goes to ERROR.
	RNR bool
	// RemoteStatus reports that a request the responder refuses completes
	// with the cause (REM_OPERATION_ERR for a short receive buffer,
	// RNR_RETRY_CNT_EXC_ERR, ...). Without it (iWARP, where the responder
	// just terminates the connection) every such refusal completes with
	// REM_ACCESS_ABORT_ERR.
	RemoteStatus bool
	// SolicitedEvents reports that JFC.Rearm(true) waits for a solicited
	// or failed record. Without it (soft-iWARP never marks a receive
	// solicited) Rearm(true) arms for any record: more wake-ups, none
	// missed.
	SolicitedEvents bool
	// SolicitedInCR reports whether receive records carry jetty.CRSolicited
	// for messages sent with FlagSolicited. Verbs devices do not (ibv_wc
	// has no such bit), though solicited-only arming works on them.
	SolicitedInCR bool
	// Views is how the device runs view.View transfers.
	Views ViewPath
	// SigOffload reports a device that can gather, scatter and sign a
	// view's data itself: an mlx5 device whose mlx5dv_query_device lists
	// CRC signature offload. The SDK does not use it yet (Views says
	// what it does).
	SigOffload bool
	Ports      []PortAttr

	// MapImports reports that segment.Target.Map works: an imported
	// segment can be mapped into this process, which then loads and
	// stores the owner's memory directly (UMDK's urma_import_seg with the
	// mapping flag). Loopback maps allocated segments; verbs devices
	// cannot, and Map fails there with ErrNotSupported.
	MapImports bool

	// SendInvalidate reports that SEND_INVALIDATE runs: a SEND that
	// invalidates a segment of its receiver. Without it Post refuses the
	// opcode with ErrNotSupported.
	SendInvalidate bool
	// WriteNotify reports that WRITE_NOTIFY runs: a WRITE followed by an
	// 8-byte store at a notify address, visible only after the data.
	// Without it Post refuses the opcode with ErrNotSupported.
	WriteNotify bool

	// Queue knobs: what a queue's configuration may ask for; NewJFS,
	// NewJFR and NewJetty refuse the rest with ErrNotSupported.
	//
	// RxThreshold reports that a JFR or Jetty takes a receive threshold
	// (jetty.JFRConfig.RxThreshold, SetRxThreshold) and raises
	// EventJFRLimit or EventJettyLimit when its posted receives fall
	// below it.
	RxThreshold bool
	// ErrorSuspend reports that a send queue can suspend on an error
	// (jetty.JFSConfig.ErrorSuspend; urma_device_feature_t.error_suspend).
	ErrorSuspend bool
	// ErrTimeout reports that jetty.JFSConfig.ErrTimeout is honoured.
	ErrTimeout bool
	// OrderCap is the set of order types (jetty.JFSConfig.Order) a queue
	// of a reliable mode accepts; a UM queue accepts OrderNO.
	OrderCap OrderCap

	// MaxJettyGroups and MaxJettiesInGroup bound jetty groups
	// (max_jetty_grp, max_jetty_in_jetty_grp); zero when the device has
	// none, and jetty.NewJettyGroup fails with ErrNotSupported.
	MaxJettyGroups    int
	MaxJettiesInGroup int
}

// SupportsMode reports whether the device offers transport mode m.
func (a *DeviceAttr) SupportsMode(m TransportMode) bool { return a.Modes&m != 0 }

func deviceAttrOf(p provider.DeviceAttr) DeviceAttr {
	a := DeviceAttr{
		Transport: TransportType(p.Transport), GUID: p.GUID,
		MaxJFC: p.MaxJFC, MaxJFS: p.MaxJFS, MaxJFR: p.MaxJFR, MaxJetty: p.MaxJetty,
		MaxJFCDepth: p.MaxJFCDepth, MaxJFSDepth: p.MaxJFSDepth, MaxJFRDepth: p.MaxJFRDepth,
		MaxJFSSGE: p.MaxJFSSGE, MaxJFRSGE: p.MaxJFRSGE, MaxReadSGE: p.MaxReadSGE, MaxInline: p.MaxInline,
		MaxMsgSize: p.MaxMsgSize, MaxUMMsgSize: p.MaxUMMsgSize,
		AtomicOps: AtomicOps(p.AtomicOps), AtomicSize: p.AtomicSize, Modes: TransportMode(p.Modes),
		MaxEIDs: p.MaxEIDs, ImmData: p.ImmData, RNR: p.RNR, RemoteStatus: p.RemoteStatus,
		SolicitedEvents: p.SolicitedEvents, SolicitedInCR: p.SolicitedInCR,
		Views: ViewPath(p.Views), SigOffload: p.SigOffload,
	}
	a.SendInvalidate, a.WriteNotify = p.SendInvalidate, p.WriteNotify
	a.RxThreshold, a.ErrorSuspend, a.ErrTimeout, a.OrderCap = p.RxThreshold, p.ErrorSuspend, p.ErrTimeout, OrderCap(p.OrderCap)

	a.MaxJettyGroups, a.MaxJettiesInGroup = p.MaxJettyGroups, p.MaxJettiesInGroup
	if p.Ports != nil {
		a.Ports = make([]PortAttr, len(p.Ports))
		for i, pt := range p.Ports {
			a.Ports[i] = PortAttr{State: PortState(pt.State), MTU: pt.MTU, SpeedMbps: pt.SpeedMbps}
		}
	}
	// Mapped imports.
	a.MapImports = p.MapImports
	return a
}

// Status is a URMA status code (urma_status_t): 0 for success, a positive
// errno value, or StatusFail. StatusOf reads it from an error; errors.Is
// tests an error against the Err sentinels.
type Status int32

// URMA status values: the errno-valued ones carry the Linux errno numbers,
// as urma_status_t does.
const (
	StatusSuccess    Status = 0
	StatusAgain      Status = Status(provider.StatusAgain)
	StatusNoMemory   Status = Status(provider.StatusNoMemory)
	StatusPermission Status = Status(provider.StatusPermission)
	StatusTimeout    Status = Status(provider.StatusTimeout)
	StatusInvalid    Status = Status(provider.StatusInvalid)
	StatusExist      Status = Status(provider.StatusExist)
	StatusInProgress Status = Status(provider.StatusInProgress)
	StatusFail       Status = 0x1000
)

// String describes the status.
func (s Status) String() string { return provider.Status(s).Error() }

// LogLevel is a log message's severity, with the syslog values of
// urma_vlog_level_t: a smaller value is more severe.
type LogLevel int

// Log levels.
const (
	LogEmerg   LogLevel = 0
	LogAlert   LogLevel = 1
	LogCrit    LogLevel = 2
	LogError   LogLevel = 3
	LogWarning LogLevel = 4
	LogNotice  LogLevel = 5
	LogInfo    LogLevel = 6
	LogDebug   LogLevel = 7
)

// String returns the level's name, as URMA_VLOG_LEVEL_ spells it.
func (l LogLevel) String() string { return provider.LogLevel(l).String() }
