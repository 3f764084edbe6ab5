package provider

import "fmt"

// Opcode is a work request opcode with the values of urma_opcode_t.
type Opcode uint8

// URMA opcodes.
const (
	OpWrite          Opcode = 0x00
	OpWriteImm       Opcode = 0x01
	OpWriteNotify    Opcode = 0x02
	OpRead           Opcode = 0x10
	OpCAS            Opcode = 0x20
	OpSwap           Opcode = 0x21
	OpFAdd           Opcode = 0x22
	OpFSub           Opcode = 0x23
	OpFAnd           Opcode = 0x24
	OpFOr            Opcode = 0x25
	OpFXor           Opcode = 0x26
	OpSend           Opcode = 0x40
	OpSendImm        Opcode = 0x41
	OpSendInvalidate Opcode = 0x42
	OpNOP            Opcode = 0x51
	OpWriteAtomic    Opcode = 0x60
	OpFlushDMA       Opcode = 0x80
)

var opcodeNames = map[Opcode]string{
	OpWrite: "WRITE", OpWriteImm: "WRITE_IMM", OpWriteNotify: "WRITE_NOTIFY",
	OpRead: "READ", OpCAS: "CAS", OpSwap: "SWAP", OpFAdd: "FADD", OpFSub: "FSUB",
	OpFAnd: "FAND", OpFOr: "FOR", OpFXor: "FXOR", OpSend: "SEND", OpSendImm: "SEND_IMM",
	OpSendInvalidate: "SEND_INVALIDATE", OpNOP: "NOP", OpWriteAtomic: "WRITE_ATOMIC",
	OpFlushDMA: "FLUSH_DMA",
}

// String returns the URMA name of the opcode without the URMA_OPC_ prefix.
func (o Opcode) String() string {
	if n, ok := opcodeNames[o]; ok {
		return n
	}
	return fmt.Sprintf("Opcode(%#x)", uint8(o))
}

// IsAtomic reports whether the opcode is one of the 8-byte atomics.
func (o Opcode) IsAtomic() bool { return o >= OpCAS && o <= OpFXor }

// IsOneSided reports whether the opcode addresses remote memory directly
// (write, read and atomics), which UM transport refuses.
func (o Opcode) IsOneSided() bool {
	return o == OpWrite || o == OpWriteImm || o == OpWriteNotify || o == OpRead ||
		o.IsAtomic() || o == OpWriteAtomic
}

// IsSend reports whether the opcode consumes a receive at the target.
func (o Opcode) IsSend() bool { return o == OpSend || o == OpSendImm || o == OpSendInvalidate }

// CROpcode is what a receive-side completion record completed, with the
// values of urma_cr_opcode_t. Send-side records carry the request's Opcode
// in CR.WROpcode instead.
type CROpcode uint8

// Receive completion opcodes.
const (
	CROpSend           CROpcode = 0x00
	CROpSendImm        CROpcode = 0x01
	CROpSendInvalidate CROpcode = 0x02
	CROpWriteImm       CROpcode = 0x03
	CROpFlushWrite     CROpcode = 0x04
)

var crOpcodeNames = [...]string{"SEND", "SEND_WITH_IMM", "SEND_WITH_INV", "WRITE_WITH_IMM", "FLUSH_WRITE"}

// String returns the URMA name without the URMA_CR_OPC_ prefix.
func (o CROpcode) String() string {
	if int(o) < len(crOpcodeNames) {
		return crOpcodeNames[o]
	}
	return fmt.Sprintf("CROpcode(%#x)", uint8(o))
}

// CROpcodeOf is the receive-side opcode of a message sent with op; ok is
// false for opcodes that consume no receive.
func CROpcodeOf(op Opcode) (CROpcode, bool) {
	switch op {
	case OpSend:
		return CROpSend, true
	case OpSendImm:
		return CROpSendImm, true
	case OpSendInvalidate:
		return CROpSendInvalidate, true
	case OpWriteImm:
		return CROpWriteImm, true
	}
	return 0, false
}

// CRStatus is the status of a completion record, with the values of
// urma_cr_status_t.
type CRStatus uint8

// Completion record statuses.
const (
	CRSuccess              CRStatus = 0
	CRUnsupportedOpcodeErr CRStatus = 1
	CRLocLenErr            CRStatus = 2
	CRLocOperationErr      CRStatus = 3
	CRLocAccessErr         CRStatus = 4
	CRRemRespLenErr        CRStatus = 5
	CRRemUnsupportedReqErr CRStatus = 6
	CRRemOperationErr      CRStatus = 7
	CRRemAccessAbortErr    CRStatus = 8
	CRAckTimeoutErr        CRStatus = 9
	CRRNRRetryCntExcErr    CRStatus = 10
	CRWRFlushErr           CRStatus = 11
	CRWRSuspendDone        CRStatus = 12
	CRWRFlushErrDone       CRStatus = 13
	CRWRUnhandled          CRStatus = 14
	CRLocDataPoison        CRStatus = 15
	CRRemDataPoison        CRStatus = 16
	// CRSignatureErr is not in urma_cr_status_t: a block signature check on
	// a view.View failed. The data moved; the view's Check names the
	// block. Its CRError matches ErrSignature.
	CRSignatureErr CRStatus = 64
)

var crStatusNames = [...]string{
	"SUCCESS", "UNSUPPORTED_OPCODE_ERR", "LOC_LEN_ERR", "LOC_OPERATION_ERR",
	"LOC_ACCESS_ERR", "REM_RESP_LEN_ERR", "REM_UNSUPPORTED_REQ_ERR", "REM_OPERATION_ERR",
	"REM_ACCESS_ABORT_ERR", "ACK_TIMEOUT_ERR", "RNR_RETRY_CNT_EXC_ERR", "WR_FLUSH_ERR",
	"WR_SUSPEND_DONE", "WR_FLUSH_ERR_DONE", "WR_UNHANDLED", "LOC_DATA_POISON",
	"REM_DATA_POISON",
}

// String returns the URMA name without the URMA_CR_ prefix.
func (s CRStatus) String() string {
	if s == CRSignatureErr {
		return "SIGNATURE_ERR"
	}
	if int(s) < len(crStatusNames) {
		return crStatusNames[s]
	}
	return fmt.Sprintf("CRStatus(%d)", uint8(s))
}

// EventType is an async event type with the values of urma_async_event_type_t.
type EventType uint8

// Async event types.
const (
	EventJFCErr EventType = iota
	EventJFSErr
	EventJFRErr
	EventJFRLimit
	EventJettyErr
	EventJettyLimit
	EventJettyGrpErr
	EventPortActive
	EventPortDown
	EventDevFatal
	EventEIDChange
	EventELRErr
	EventELRDone
)

var eventNames = [...]string{
	"JFC_ERR", "JFS_ERR", "JFR_ERR", "JFR_LIMIT", "JETTY_ERR", "JETTY_LIMIT",
	"JETTY_GRP_ERR", "PORT_ACTIVE", "PORT_DOWN", "DEV_FATAL", "EID_CHANGE", "ELR_ERR",
	"ELR_DONE",
}

// String returns the URMA name without the URMA_EVENT_ prefix.
func (e EventType) String() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return fmt.Sprintf("EventType(%d)", uint8(e))
}

// TransportMode is a jetty transport mode (urma_transport_mode_t).
type TransportMode uint8

// Transport modes.
const (
	// RM is reliable message: one JFS reaches many imported JFRs.
	RM TransportMode = 0x1
	// RC is reliable connection: a Jetty bound to exactly one remote Jetty.
	RC TransportMode = 0x2
	// UM is unreliable message: sends only, no one-sided operations.
	UM TransportMode = 0x4
)

// String returns "RM", "RC" or "UM".
func (m TransportMode) String() string {
	switch m {
	case RM:
		return "RM"
	case RC:
		return "RC"
	case UM:
		return "UM"
	}
	return fmt.Sprintf("TransportMode(%#x)", uint8(m))
}

// Valid reports whether m is exactly one known mode.
func (m TransportMode) Valid() bool { return m == RM || m == RC || m == UM }

// Access is the set of access rights of a segment (URMA_ACCESS_*).
type Access uint8

// Access bits. Local access is always allowed unless stated otherwise; the
// remote bits say what peers may do.
const (
	AccessLocalOnly Access = 0x1
	AccessRead      Access = 0x2
	AccessWrite     Access = 0x4
	AccessAtomic    Access = 0x8
	accessAll              = AccessLocalOnly | AccessRead | AccessWrite | AccessAtomic
)

// Validate applies URMA's registration rules: some access must be given,
// LOCAL_ONLY excludes every remote right, WRITE needs READ, and ATOMIC needs
// READ and WRITE.
func (a Access) Validate() error {
	switch {
	case a == 0:
		return Errorf(ErrInvalid, "access: no access bits set (use AccessLocalOnly for private memory)")
	case a&^accessAll != 0:
		return Errorf(ErrInvalid, "access: unknown bits %#x", uint8(a&^accessAll))
	case a&AccessLocalOnly != 0 && a != AccessLocalOnly:
		return Errorf(ErrInvalid, "access: LOCAL_ONLY cannot be combined with remote access (%v)", a)
	case a&AccessAtomic != 0 && a&(AccessRead|AccessWrite) != AccessRead|AccessWrite:
		return Errorf(ErrInvalid, "access: ATOMIC requires READ and WRITE (%v)", a)
	case a&AccessWrite != 0 && a&AccessRead == 0:
		return Errorf(ErrInvalid, "access: WRITE requires READ (%v)", a)
	}
	return nil
}

// String lists the bits, e.g. "READ|WRITE".
func (a Access) String() string {
	if a == 0 {
		return "NONE"
	}
	s := ""
	for _, b := range []struct {
		bit  Access
		name string
	}{{AccessLocalOnly, "LOCAL_ONLY"}, {AccessRead, "READ"}, {AccessWrite, "WRITE"}, {AccessAtomic, "ATOMIC"}} {
		if a&b.bit != 0 {
			if s != "" {
				s += "|"
			}
			s += b.name
		}
	}
	if rest := a &^ accessAll; rest != 0 {
		if s != "" {
			s += "|"
		}
		s += fmt.Sprintf("%#x", uint8(rest))
	}
	return s
}

// TokenPolicy says how a token protects a segment or jetty.
type TokenPolicy uint8

// Token policies (urma_token_policy_t).
const (
	TokenNone         TokenPolicy = 0
	TokenPlainText    TokenPolicy = 1
	TokenSigned       TokenPolicy = 2
	TokenAllEncrypted TokenPolicy = 3
)

// String returns the URMA name.
func (p TokenPolicy) String() string {
	switch p {
	case TokenNone:
		return "NONE"
	case TokenPlainText:
		return "PLAIN_TEXT"
	case TokenSigned:
		return "SIGNED"
	case TokenAllEncrypted:
		return "ALL_ENCRYPTED"
	}
	return fmt.Sprintf("TokenPolicy(%d)", uint8(p))
}

// State is the state of a JFS, JFR or Jetty. JFRs use Reset, Ready and Error.
type State uint8

// Queue states (urma_jetty_state_t).
const (
	StateReset State = iota
	StateReady
	StateSuspended
	StateError
)

// String returns the URMA name.
func (s State) String() string {
	switch s {
	case StateReset:
		return "RESET"
	case StateReady:
		return "READY"
	case StateSuspended:
		return "SUSPENDED"
	case StateError:
		return "ERROR"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// WRFlags are the per-request flags, with the bit positions of
// urma_jfs_wr_flag_t.
type WRFlags uint32

// Work request flags.
const (
	// FlagPlaceOrderRelax and FlagPlaceOrderStrong are the two values of
	// the two-bit place_order field: URMA's requests for ordered placement
	// relative to earlier requests. FlagCompOrder asks for completion in
	// order with earlier requests. No provider offers more order than
	// every request already has, so Post refuses them with
	// ErrNotSupported.
	FlagPlaceOrderRelax  WRFlags = 0x1
	FlagPlaceOrderStrong WRFlags = 0x2
	FlagCompOrder        WRFlags = 1 << 2
	// FlagFence waits for earlier reads and atomics of the queue to finish.
	FlagFence WRFlags = 1 << 3
	// FlagSolicited raises a solicited event at the receiver (solicited_enable).
	FlagSolicited WRFlags = 1 << 4
	// FlagSignaled asks for a completion record on success
	// (complete_enable). Errors always produce one.
	FlagSignaled WRFlags = 1 << 5
	// FlagInline copies the data into the request at post time: WR.Inline
	// holds it and needs no registration (inline_flag).
	FlagInline WRFlags = 1 << 6

	// FlagPlaceOrderMask covers the place_order field.
	FlagPlaceOrderMask WRFlags = 0x3
	// WRFlagsKnown is every bit UMDK defines.
	WRFlagsKnown = FlagPlaceOrderMask | FlagCompOrder | FlagFence | FlagSolicited | FlagSignaled | FlagInline
)

// String lists the flags with UMDK's field names.
func (f WRFlags) String() string {
	s := ""
	add := func(n string) {
		if s != "" {
			s += "|"
		}
		s += n
	}
	switch f & FlagPlaceOrderMask {
	case FlagPlaceOrderRelax:
		add("RELAX_ORDER")
	case FlagPlaceOrderStrong:
		add("STRONG_ORDER")
	case FlagPlaceOrderMask:
		add("PLACE_ORDER(3)")
	}
	for _, b := range []struct {
		bit  WRFlags
		name string
	}{{FlagCompOrder, "COMP_ORDER"}, {FlagFence, "FENCE"}, {FlagSolicited, "SOLICITED_ENABLE"},
		{FlagSignaled, "COMPLETE_ENABLE"}, {FlagInline, "INLINE"}} {
		if f&b.bit != 0 {
			add(b.name)
		}
	}
	if rest := f &^ WRFlagsKnown; rest != 0 {
		add(fmt.Sprintf("%#x", uint32(rest)))
	}
	if s == "" {
		return "0"
	}
	return s
}

// CRFlags describe a completion record: bits 0-3 are urma_cr_flag_t's,
// bits 8 and up are extensions of this SDK that UMDK's eight-bit flag
// cannot hold.
type CRFlags uint16

// Completion record flags.
const (
	// CRFlagRecv marks a record of a receive (the s_r bit).
	CRFlagRecv CRFlags = 1 << 0
	// CRFlagJetty marks a record of a Jetty rather than a JFS or JFR.
	CRFlagJetty CRFlags = 1 << 1
	// CRFlagSuspendDone and CRFlagFlushErrDone mark the records a device
	// writes when a suspended or flushed queue has finished (suspend_done,
	// flush_err_done).
	CRFlagSuspendDone  CRFlags = 1 << 2
	CRFlagFlushErrDone CRFlags = 1 << 3
	// CRFlagImm marks a record that carries immediate data (an extension:
	// UMDK tells it by the opcode).
	CRFlagImm CRFlags = 1 << 8
	// CRFlagSolicited marks a receive of a solicited message (an extension).
	CRFlagSolicited CRFlags = 1 << 9
)

// String lists the flags.
func (f CRFlags) String() string {
	s := ""
	for _, b := range []struct {
		bit  CRFlags
		name string
	}{{CRFlagRecv, "RECV"}, {CRFlagJetty, "JETTY"}, {CRFlagSuspendDone, "SUSPEND_DONE"},
		{CRFlagFlushErrDone, "FLUSH_ERR_DONE"}, {CRFlagImm, "IMM"}, {CRFlagSolicited, "SOLICITED"}} {
		if f&b.bit != 0 {
			if s != "" {
				s += "|"
			}
			s += b.name
			f &^= b.bit
		}
	}
	if f != 0 {
		if s != "" {
			s += "|"
		}
		s += fmt.Sprintf("%#x", uint16(f))
	}
	if s == "" {
		return "0"
	}
	return s
}
