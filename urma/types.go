package urma

import "github.com/urma-go/sdk/provider"

// EID is a 16-byte endpoint identifier in IPv6 text form; IPv4 addresses map
// to ::ffff:a.b.c.d.
type EID = provider.EID

// ParseEID parses an EID from IPv6 or IPv4 text.
func ParseEID(s string) (EID, error) { return provider.ParseEID(s) }

// JettyID names a JFS, JFR or Jetty: {eid, uasid, id}.
type JettyID = provider.JettyID

// DeviceAttr is a device's capabilities.
type DeviceAttr = provider.DeviceAttr

// PortAttr describes a port.
type PortAttr = provider.PortAttr

// PortState is a port's state.
type PortState = provider.PortState

// AtomicOps is a set of atomic opcodes.
type AtomicOps = provider.AtomicOps

// Opcode is a work request opcode (urma_opcode_t values).
type Opcode = provider.Opcode

// CRStatus is a completion record status (urma_cr_status_t values).
type CRStatus = provider.CRStatus

// EventType is an async event type (urma_async_event_type_t values).
type EventType = provider.EventType

// TransportMode is RM, RC or UM.
type TransportMode = provider.TransportMode

// State is a queue state.
type State = provider.State

// Status is a URMA status code (urma_status_t); it is an error.
type Status = provider.Status

// LogLevel orders log messages.
type LogLevel = provider.LogLevel

// Opcodes.
const (
	OpWrite          = provider.OpWrite
	OpWriteImm       = provider.OpWriteImm
	OpWriteNotify    = provider.OpWriteNotify
	OpRead           = provider.OpRead
	OpCAS            = provider.OpCAS
	OpSwap           = provider.OpSwap
	OpFAdd           = provider.OpFAdd
	OpFSub           = provider.OpFSub
	OpFAnd           = provider.OpFAnd
	OpFOr            = provider.OpFOr
	OpFXor           = provider.OpFXor
	OpSend           = provider.OpSend
	OpSendImm        = provider.OpSendImm
	OpSendInvalidate = provider.OpSendInvalidate
	OpNOP            = provider.OpNOP
	OpWriteAtomic    = provider.OpWriteAtomic
	OpFlushDMA       = provider.OpFlushDMA
)

// Completion record statuses.
const (
	CRSuccess              = provider.CRSuccess
	CRUnsupportedOpcodeErr = provider.CRUnsupportedOpcodeErr
	CRLocLenErr            = provider.CRLocLenErr
	CRLocOperationErr      = provider.CRLocOperationErr
	CRLocAccessErr         = provider.CRLocAccessErr
	CRRemRespLenErr        = provider.CRRemRespLenErr
	CRRemUnsupportedReqErr = provider.CRRemUnsupportedReqErr
	CRRemOperationErr      = provider.CRRemOperationErr
	CRRemAccessAbortErr    = provider.CRRemAccessAbortErr
	CRAckTimeoutErr        = provider.CRAckTimeoutErr
	CRRNRRetryCntExcErr    = provider.CRRNRRetryCntExcErr
	CRWRFlushErr           = provider.CRWRFlushErr
	CRWRSuspendDone        = provider.CRWRSuspendDone
	CRWRFlushErrDone       = provider.CRWRFlushErrDone
	CRWRUnhandled          = provider.CRWRUnhandled
	CRLocDataPoison        = provider.CRLocDataPoison
	CRRemDataPoison        = provider.CRRemDataPoison
	CRSignatureErr         = provider.CRSignatureErr
)

// Async event types.
const (
	EventJFCErr      = provider.EventJFCErr
	EventJFSErr      = provider.EventJFSErr
	EventJFRErr      = provider.EventJFRErr
	EventJFRLimit    = provider.EventJFRLimit
	EventJettyErr    = provider.EventJettyErr
	EventJettyLimit  = provider.EventJettyLimit
	EventJettyGrpErr = provider.EventJettyGrpErr
	EventPortActive  = provider.EventPortActive
	EventPortDown    = provider.EventPortDown
	EventDevFatal    = provider.EventDevFatal
	EventEIDChange   = provider.EventEIDChange
	EventELRErr      = provider.EventELRErr
	EventELRDone     = provider.EventELRDone
)

// Transport modes.
const (
	RM = provider.RM
	RC = provider.RC
	UM = provider.UM
)

// Queue states.
const (
	StateReset     = provider.StateReset
	StateReady     = provider.StateReady
	StateSuspended = provider.StateSuspended
	StateError     = provider.StateError
)

// URMA status codes.
const (
	StatusSuccess    = provider.StatusSuccess
	StatusAgain      = provider.StatusAgain
	StatusNoMemory   = provider.StatusNoMemory
	StatusPermission = provider.StatusPermission
	StatusTimeout    = provider.StatusTimeout
	StatusInvalid    = provider.StatusInvalid
	StatusExist      = provider.StatusExist
	StatusInProgress = provider.StatusInProgress
	StatusFail       = provider.StatusFail
)

// TransportType is a device's transport (urma_transport_type_t, with
// extensions for the transports UMDK does not define).
type TransportType = provider.TransportType

// Transport types.
const (
	TransportUB       = provider.TransportUB
	TransportLoopback = provider.TransportLoopback
	TransportIB       = provider.TransportIB
	TransportRoCE     = provider.TransportRoCE
	TransportIWARP    = provider.TransportIWARP
)

// Log levels.
const (
	LogError   = provider.LogError
	LogWarning = provider.LogWarning
	LogInfo    = provider.LogInfo
	LogDebug   = provider.LogDebug
)
