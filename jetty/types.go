package jetty

import (
	"fmt"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// WR is a send-side work request; see provider.WR for which fields each
// opcode uses. Target may be a *Remote.
type WR = provider.WR

// RecvWR is a receive request: the buffers an incoming message fills.
type RecvWR = provider.RecvWR

// CR is a completion record.
type CR = provider.CR

// SGE is a scatter/gather element, made by segment.Segment.SGE or
// segment.Target.SGE.
type SGE = provider.SGE

// Opcode is a work request opcode.
type Opcode = provider.Opcode

// Flags are per-request flags.
type Flags = provider.WRFlags

// Request flags.
const (
	Signaled    = provider.FlagSignaled
	Solicited   = provider.FlagSolicited
	Fence       = provider.FlagFence
	Inline      = provider.FlagInline
	RelaxOrder  = provider.FlagPlaceOrderRelax
	StrongOrder = provider.FlagPlaceOrderStrong
	CompOrder   = provider.FlagCompOrder
)

// CRFlags describe a completion record.
type CRFlags = provider.CRFlags

// CROpcode is what a receive-side record completed (urma_cr_opcode_t).
type CROpcode = provider.CROpcode

// Receive completion opcodes.
const (
	CRSend           = provider.CROpSend
	CRSendImm        = provider.CROpSendImm
	CRSendInvalidate = provider.CROpSendInvalidate
	CRWriteImm       = provider.CROpWriteImm
	CRFlushWrite     = provider.CROpFlushWrite
)

// Completion record flags.
const (
	CRRecv         = provider.CRFlagRecv
	CRJetty        = provider.CRFlagJetty
	CRSuspendDone  = provider.CRFlagSuspendDone
	CRFlushErrDone = provider.CRFlagFlushErrDone
	CRImm          = provider.CRFlagImm
	CRSolicited    = provider.CRFlagSolicited
)

// Mode is a transport mode.
type Mode = provider.TransportMode

// Transport modes.
const (
	RM = provider.RM
	RC = provider.RC
	UM = provider.UM
)

// State is a queue state.
type State = provider.State

// Queue states.
const (
	StateReset     = provider.StateReset
	StateReady     = provider.StateReady
	StateSuspended = provider.StateSuspended
	StateError     = provider.StateError
)

// Attr is what Query returns.
type Attr = provider.QueueAttr

// Descriptor is what a peer needs to import a JFR or Jetty; it marshals to
// 32 bytes.
type Descriptor = provider.JettyDesc

// DescriptorSize is the length of a marshalled Descriptor.
const DescriptorSize = provider.JettyDescSize

// PostError reports the first request Post did not queue. The requests
// before Index were queued; the one at Index and those after it were not.
type PostError struct {
	Op    string
	Index int
	Err   error
}

// Error names the request index and the cause.
func (e *PostError) Error() string {
	return fmt.Sprintf("urma: %s: request %d: %v", e.Op, e.Index, e.Err)
}

// Unwrap returns the cause.
func (e *PostError) Unwrap() error { return e.Err }

// JFRState is the state of a JFR, with the values of urma_jfr_state_t.
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

func jfrStateOf(s provider.State) (JFRState, bool) {
	switch s {
	case provider.StateReset:
		return JFRStateReset, true
	case provider.StateReady:
		return JFRStateReady, true
	case provider.StateError:
		return JFRStateError, true
	}
	return 0, false
}

// JFRAttr is what JFR.Query reports.
type JFRAttr struct {
	ID    urma.JettyID
	State JFRState
	Mode  Mode
	Depth int
	// Outstanding is the number of posted receives not yet consumed.
	Outstanding int
}
