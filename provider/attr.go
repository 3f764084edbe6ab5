package provider

import (
	"fmt"
	"time"
)

// AtomicOps is the set of atomic opcodes a device executes, bit
// (op - OpCAS) per opcode.
type AtomicOps uint16

// AtomicOpsOf builds the set from opcodes.
func AtomicOpsOf(ops ...Opcode) AtomicOps {
	var a AtomicOps
	for _, op := range ops {
		if op.IsAtomic() {
			a |= 1 << (op - OpCAS)
		}
	}
	return a
}

// Has reports whether op is in the set.
func (a AtomicOps) Has(op Opcode) bool { return op.IsAtomic() && a&(1<<(op-OpCAS)) != 0 }

// String lists the opcodes.
func (a AtomicOps) String() string {
	s := ""
	for op := OpCAS; op <= OpFXor; op++ {
		if a.Has(op) {
			if s != "" {
				s += ","
			}
			s += op.String()
		}
	}
	if s == "" {
		return "none"
	}
	return s
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
func (t TransportType) String() string {
	switch t {
	case TransportInvalid:
		return "INVALID"
	case TransportUB:
		return "UB"
	case TransportLoopback:
		return "loopback"
	case TransportIB:
		return "InfiniBand"
	case TransportRoCE:
		return "RoCE"
	case TransportIWARP:
		return "iWARP"
	}
	return fmt.Sprintf("TransportType(%#x)", int(t))
}

// MarshalText is the String form, so that JSON shows a name.
func (t TransportType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses what MarshalText wrote.
func (t *TransportType) UnmarshalText(b []byte) error {
	for _, v := range []TransportType{TransportInvalid, TransportUB, TransportLoopback, TransportIB, TransportRoCE, TransportIWARP} {
		if string(b) == v.String() {
			*t = v
			return nil
		}
	}
	var n int
	if _, err := fmt.Sscanf(string(b), "TransportType(%v)", &n); err == nil {
		*t = TransportType(n)
		return nil
	}
	return Errorf(ErrInvalid, "unknown transport %q", b)
}

// PortState is the state of a device port.
type PortState uint8

// Port states, as urma_port_state_t.
const (
	PortNoState PortState = iota
	PortDown
	PortInit
	PortArmed
	PortActive
	PortActiveDefer
)

// String returns the state's name.
func (s PortState) String() string {
	names := []string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}
	if int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("PortState(%d)", uint8(s))
}

// PortAttr describes one port of a device.
type PortAttr struct {
	State PortState
	// MTU is the active MTU in bytes.
	MTU int
	// SpeedMbps is the active speed, 0 when not meaningful (loopback).
	SpeedMbps uint64
}

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
	// MaxInline is the largest FlagInline payload.
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
	// SolicitedInCR reports whether receive records carry CRFlagSolicited
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

	// MapImports reports that imported segments can be mapped into the
	// importer's address space (TargetMapper; UMDK's mapped import).
	MapImports bool

	// SendInvalidate reports that SEND_INVALIDATE runs: a SEND that
	// invalidates a segment of its receiver. Without it Post refuses the
	// opcode with ErrNotSupported.
	SendInvalidate bool
	// WriteNotify reports that WRITE_NOTIFY runs: a WRITE followed by an
	// 8-byte store at a notify address, visible only after the data.
	// Without it Post refuses the opcode with ErrNotSupported.
	WriteNotify bool

	// Queue knobs (see JFSConfig and JFRConfig).
	//
	// RxThreshold reports that a JFR or Jetty takes a receive threshold
	// (JFRConfig.RxThreshold, RxThresholder) and raises EventJFRLimit or
	// EventJettyLimit when its posted receives fall below it.
	RxThreshold bool
	// ErrorSuspend reports that a send queue can suspend on an error
	// (JFSConfig.ErrorSuspend; urma_device_feature_t.error_suspend).
	ErrorSuspend bool
	// ErrTimeout reports that JFSConfig.ErrTimeout is honoured.
	ErrTimeout bool
	// OrderCap is the set of order types a queue of a reliable mode (RM,
	// RC) accepts (urma_order_type_cap_t); a UM queue accepts OrderNO.
	OrderCap OrderCap

	// MaxJettyGroups and MaxJettiesInGroup bound jetty groups
	// (max_jetty_grp, max_jetty_in_jetty_grp); zero when the provider
	// offers none.
	MaxJettyGroups    int
	MaxJettiesInGroup int
}

// ViewPath is how a device runs view.View transfers.
type ViewPath uint8

// View paths.
const (
	// ViewSoftware moves a view's data through a bounce segment, gathered,
	// scattered and signed by the CPU.
	ViewSoftware ViewPath = iota
	// ViewOffload lets the device do it with UMR memory keys (mlx5).
	ViewOffload
)

// String returns "software" or "offload".
func (v ViewPath) String() string {
	switch v {
	case ViewSoftware:
		return "software"
	case ViewOffload:
		return "offload"
	}
	return fmt.Sprintf("ViewPath(%d)", uint8(v))
}

// SupportsMode reports whether m is in Modes.
func (a *DeviceAttr) SupportsMode(m TransportMode) bool { return a.Modes&m != 0 }

// SegmentConfig configures Alloc and Register.
type SegmentConfig struct {
	Access      Access
	TokenPolicy TokenPolicy
	// Token is the secret a peer must present at import (PLAIN_TEXT).
	Token uint32
	// TokenID, when non-zero, is a token id from AllocTokenID shared with
	// other segments; zero lets the provider allocate one for the segment.
	TokenID uint32
	// HugePages asks Alloc for huge pages, falling back to normal pages.
	HugePages bool
}

// JFCConfig configures a JFC.
type JFCConfig struct {
	Depth int
	// JFCE, when set, enables event mode.
	JFCE JFCE
	// ModerationCount and ModerationPeriod coalesce events; a provider that
	// cannot moderate accepts and ignores them.
	ModerationCount  int
	ModerationPeriod time.Duration
	// LockFree says that one goroutine at a time polls the JFC
	// (urma_jfc_flag_t.lock_free): the provider may drop what it does so
	// that concurrent polls each take a record once. A provider that does
	// nothing of the kind accepts and ignores it.
	LockFree bool
	// Owner is returned in async events and by JFCE.Wait; the SDK sets it to
	// its own wrapper.
	Owner any
}

// JFSConfig configures a JFS, or the send side of a Jetty.
type JFSConfig struct {
	Depth     int
	Mode      TransportMode
	MaxSGE    int
	MaxInline int
	// RNRRetry is how often a send is retried while the target has no
	// receive posted; 7 retries forever, as on verbs.
	RNRRetry int
	// RNRTimeout is the pause between retries.
	RNRTimeout time.Duration
	JFC        JFC
	// LockFree says that one goroutine at a time posts to the queue and
	// polls or rearms its JFC (urma_jfs_flag_t.lock_free): the provider
	// may drop the locked instructions that concurrent posters need. A
	// provider that does nothing of the kind accepts and ignores it.
	LockFree bool
	Owner    any

	// Queue knobs, each checked against DeviceAttr by the provider.
	//
	// ErrorSuspend makes an error move the queue to StateSuspended, its
	// later requests kept, rather than to StateError.
	ErrorSuspend bool
	// Order is the order type (urma_jfs_flag_t.order_type); OrderDefault
	// is what the provider gives anyway.
	Order OrderType
	// ErrTimeout is the err_timeout exponent plus one: 0 leaves the
	// provider's default, n (1..32) asks for 4.096us*2^(n-1) before a
	// request that gets no answer fails.
	ErrTimeout uint8
}

// JFRConfig configures a JFR.
type JFRConfig struct {
	Depth       int
	Mode        TransportMode
	MaxSGE      int
	TokenPolicy TokenPolicy
	Token       uint32
	JFC         JFC
	Owner       any

	// RxThreshold, when non-zero, arms the receive threshold at creation
	// (see RxThresholder).
	RxThreshold int
}

// JettyConfig configures a Jetty: a send queue plus either its own receive
// queue (Recv) or a shared JFR.
type JettyConfig struct {
	Send JFSConfig
	// SharedJFR, when set, is used instead of creating one from Recv.
	SharedJFR JFR
	Recv      JFRConfig
	Owner     any

	// Group, when set, is the jetty group the Jetty joins (jetty_grp). The
	// Jetty must be RM and receive with the group's token policy and token.
	Group JettyGroup
}

// QueueAttr is what Query returns for a JFS, JFR or Jetty.
type QueueAttr struct {
	ID    JettyID
	State State
	Mode  TransportMode
	Depth int
	// Outstanding is the number of requests holding a queue slot.
	Outstanding int
}
