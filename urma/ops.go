package urma

import (
	"fmt"

	"github.com/urma-go/sdk/provider"
)

// Opcode is a work request opcode, with the values of urma_opcode_t.
type Opcode uint8

// Opcodes.
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

// String returns the URMA name without the URMA_OPC_ prefix.
func (o Opcode) String() string { return provider.Opcode(o).String() }

// IsAtomic reports whether the opcode is one of the 8-byte atomics.
func (o Opcode) IsAtomic() bool { return provider.Opcode(o).IsAtomic() }

// IsOneSided reports whether the opcode addresses remote memory directly
// (write, read and atomics), which UM transport refuses.
func (o Opcode) IsOneSided() bool { return provider.Opcode(o).IsOneSided() }

// IsSend reports whether the opcode consumes a receive at the target.
func (o Opcode) IsSend() bool { return provider.Opcode(o).IsSend() }

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
	// CRSignatureErr is an extension outside UMDK's range: a view's block
	// signature did not match its data (see view.View).
	CRSignatureErr CRStatus = 64
)

// String returns the URMA name without the URMA_CR_ prefix.
func (s CRStatus) String() string { return provider.CRStatus(s).String() }

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
func (m TransportMode) String() string { return provider.TransportMode(m).String() }

// Valid reports whether m is exactly one known mode.
func (m TransportMode) Valid() bool { return provider.TransportMode(m).Valid() }

// State is the state of a JFS or Jetty, with the values of
// urma_jetty_state_t. A JFR's state is a JFRState.
type State uint8

// Queue states.
const (
	StateReset     State = 0
	StateReady     State = 1
	StateSuspended State = 2
	StateError     State = 3
)

// String returns the URMA name.
func (s State) String() string { return provider.State(s).String() }

// JFRState is the state of a JFR, with the values of urma_jfr_state_t: a
// JFR has no SUSPENDED state, so its ERROR is 2.
type JFRState uint8

// JFR states.
const (
	JFRStateReset JFRState = 0
	JFRStateReady JFRState = 1
	JFRStateError JFRState = 2
)

// String returns the URMA name.
func (s JFRState) String() string {
	switch s {
	case JFRStateReset:
		return "RESET"
	case JFRStateReady:
		return "READY"
	case JFRStateError:
		return "ERROR"
	}
	return fmt.Sprintf("JFRState(%d)", uint8(s))
}

// EventType is an async event type, with the values of
// urma_async_event_type_t.
type EventType uint8

// Async event types.
const (
	EventJFCErr      EventType = 0
	EventJFSErr      EventType = 1
	EventJFRErr      EventType = 2
	EventJFRLimit    EventType = 3
	EventJettyErr    EventType = 4
	EventJettyLimit  EventType = 5
	EventJettyGrpErr EventType = 6
	EventPortActive  EventType = 7
	EventPortDown    EventType = 8
	EventDevFatal    EventType = 9
	EventEIDChange   EventType = 10
	EventELRErr      EventType = 11
	EventELRDone     EventType = 12
)

// String returns the URMA name without the URMA_EVENT_ prefix.
func (e EventType) String() string { return provider.EventType(e).String() }
