package jetty

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/urma-go/sdk/internal/layout"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// WR is a send-side work request (urma_jfs_wr_t).
//
// Which fields an opcode uses:
//   - WRITE, WRITE_IMM: Local (gather) or Inline, Remote, Imm for WRITE_IMM.
//     Remote is exactly the range written: its Len equals the data's.
//   - READ: Local (scatter), Remote (its Len equals the Local total).
//   - CAS: Local (8 bytes receive the old value), Remote (8 bytes, aligned),
//     Compare, Operand (the swap value).
//   - SWAP, FADD, FSUB, FAND, FOR, FXOR: Local, Remote, Operand.
//   - SEND, SEND_IMM: Local or Inline, Imm for SEND_IMM.
//   - WRITE_NOTIFY: as WRITE, and Imm (the notify data) stored at Notify.
//   - SEND_INVALIDATE: as SEND, and Invalidate.
//   - NOP: nothing.
//
// Inline bytes are data only with the Inline flag set; a request that has
// them without the flag is refused. An Inline request with no Inline bytes
// takes its data from its Local SGEs, copied during the post.
//
// Hint is target_hint: under GroupPolicyHashHint it names the member of an
// imported jetty group that the request goes to (see JettyGroup); other
// targets ignore it.
//
// To is the imported JFR or Jetty the request goes to: every request
// names one, one-sided requests too (they reach the peer's memory through
// it). It may be nil on a Jetty bound in RC mode, which uses the bound
// remote. Remote is the range of an imported segment (segment.Target)
// that one-sided requests touch.
type WR struct {
	Opcode  urma.Opcode
	Hint    uint8
	Flags   Flags
	UserCtx uint64
	To      *Remote
	Local   []segment.SGE
	Remote  segment.SGE
	Inline  []byte
	Imm     uint64
	Compare uint64
	Operand uint64

	// Notify and Invalidate serve WRITE_NOTIFY and SEND_INVALIDATE; other
	// opcodes leave them zero.
	//
	// Notify is where a WRITE_NOTIFY stores its notify data, Imm, as
	// UMDK's second destination SGE names it: 8 bytes at an 8-aligned
	// address of an imported segment that grants WRITE
	// (Target.SGE(off, 8)). The 8 bytes are stored once every byte of
	// the write is visible, so a target that sees the new value at
	// Notify may read the data.
	Notify segment.SGE
	// Invalidate is the segment a SEND_INVALIDATE invalidates when the
	// message is delivered (urma_send_wr_t's tseg): a segment of the
	// receiving process's context that the sender imported. From then
	// on every request naming the segment fails, as a verbs key
	// invalidated remotely does; the receive record says which token
	// id (CR.InvalidTokenID).
	Invalidate *segment.Target
}

// DataLen is the number of bytes the request carries: the inline data's
// length, or the sum of the local SGE lengths.
func (w *WR) DataLen() uint64 {
	if w.Flags&Inline != 0 && len(w.Inline) > 0 {
		return uint64(len(w.Inline))
	}
	var n uint64
	for i := range w.Local {
		n += uint64(w.Local[i].Len)
	}
	return n
}

// RecvWR is a receive work request (urma_jfr_wr_t): the buffers an incoming
// message is scattered into, in order.
type RecvWR struct {
	UserCtx uint64
	Local   []segment.SGE
}

// CR is a completion record (urma_cr_t).
type CR struct {
	Status urma.CRStatus
	// Opcode is what a receive-side record (Flags has CRRecv) completed,
	// as urma_cr_opcode_t says: CRSend, CRSendImm, CRSendInvalidate or
	// CRWriteImm. It is zero on send-side records.
	Opcode CROpcode
	// WROpcode is the opcode of the request a send-side record completes
	// (an extension: urma_cr_t has no such field). It is zero on
	// receive-side records.
	WROpcode urma.Opcode
	Flags    CRFlags
	// Len is completion_len: bytes received, or bytes moved by a send-side
	// request.
	Len     uint32
	UserCtx uint64
	// LocalID is the id of the JFS, JFR or Jetty the record belongs to.
	LocalID uint32
	// RemoteID is the sender of a received message, or the target of a
	// send-side request.
	RemoteID urma.JettyID
	// Imm is the immediate data of a record with CRImm; on a
	// SEND_INVALIDATE receive it holds the invalidated token id in its
	// low 32 bits, as urma_cr_t's invalid_token (see InvalidTokenID).
	Imm uint64
}

// A CR has the provider's layout, so that a poll fills the caller's slice
// in place.
func init() { layout.Must(reflect.TypeFor[CR](), reflect.TypeFor[provider.CR]()) }

// InvalidTokenID is the token id of the segment a SEND_INVALIDATE
// invalidated, with ok true, on that message's successful receive record;
// ok is false for every other record.
func (c *CR) InvalidTokenID() (id uint32, ok bool) {
	return (*provider.CR)(unsafe.Pointer(c)).InvalidTokenID()
}

// OK reports whether the record has status SUCCESS.
func (c *CR) OK() bool { return c.Status == urma.CRSuccess }

// Err returns nil for SUCCESS, or a *CRError.
func (c *CR) Err() error {
	if c.Status == urma.CRSuccess {
		return nil
	}
	return &CRError{Status: c.Status, Opcode: c.WROpcode, Recv: c.Flags&CRRecv != 0, RecvOpcode: c.Opcode, UserCtx: c.UserCtx}
}

// String is a readable one-line form.
func (c CR) String() string { return (*provider.CR)(unsafe.Pointer(&c)).String() }

// CRError is the error form of a failed completion record.
type CRError struct {
	Status urma.CRStatus
	// Opcode is the failed request's opcode (send side).
	Opcode urma.Opcode
	// Recv tells a receive-side record, whose RecvOpcode applies.
	Recv       bool
	RecvOpcode CROpcode
	UserCtx    uint64
}

// Error names the status, opcode and user context.
func (e *CRError) Error() string {
	if e.Recv {
		return fmt.Sprintf("urma: receive (%v) completed with %v (ctx %#x)", e.RecvOpcode, e.Status, e.UserCtx)
	}
	return fmt.Sprintf("urma: %v completed with %v (ctx %#x)", e.Opcode, e.Status, e.UserCtx)
}

// Is makes errors.Is(err, urma.ErrSignature) true for a CRSignatureErr
// record.
func (e *CRError) Is(target error) bool {
	return e.Status == urma.CRSignatureErr && target == urma.ErrSignature
}

// CROpcode is what a receive-side record completed, with the values of
// urma_cr_opcode_t.
type CROpcode uint8

// Receive completion opcodes.
const (
	CRSend           CROpcode = 0x00
	CRSendImm        CROpcode = 0x01
	CRSendInvalidate CROpcode = 0x02
	CRWriteImm       CROpcode = 0x03
	CRFlushWrite     CROpcode = 0x04
)

// String returns the URMA name without the URMA_CR_OPC_ prefix.
func (o CROpcode) String() string { return provider.CROpcode(o).String() }

// CROpcodeOf is the CROpcode of the receive record a message sent with op
// produces; ok is false for opcodes that consume no receive.
func CROpcodeOf(op urma.Opcode) (CROpcode, bool) {
	c, ok := provider.CROpcodeOf(provider.Opcode(op))
	return CROpcode(c), ok
}

// Flags are the per-request flags, with the bit positions of
// urma_jfs_wr_flag_t.
type Flags uint32

// Request flags.
const (
	// RelaxOrder and StrongOrder are the two values of the two-bit
	// place_order field, and CompOrder asks for completion in order with
	// earlier requests. No provider offers more order than every request
	// already has (a queue's requests complete in order; Fence orders
	// after reads and atomics), so Post refuses them with
	// urma.ErrNotSupported.
	RelaxOrder  Flags = 0x1
	StrongOrder Flags = 0x2
	CompOrder   Flags = 1 << 2
	// Fence waits for earlier reads and atomics of the queue to finish.
	Fence Flags = 1 << 3
	// Solicited raises a solicited event at the receiver (solicited_enable).
	Solicited Flags = 1 << 4
	// Signaled asks for a completion record on success (complete_enable).
	// Errors always produce one. The helpers (Write, Send, ...) set it.
	Signaled Flags = 1 << 5
	// Inline copies the data into the request at post time (inline_flag).
	Inline Flags = 1 << 6
)

// String lists the flags with UMDK's field names.
func (f Flags) String() string { return provider.WRFlags(f).String() }

// CRFlags describe a completion record: bits 0-3 are urma_cr_flag_t's,
// bits 8 and up are extensions that UMDK's eight-bit flag cannot hold.
type CRFlags uint16

// Completion record flags.
const (
	// CRRecv marks a record of a receive (the s_r bit).
	CRRecv CRFlags = 1 << 0
	// CRJetty marks a record of a Jetty rather than a JFS or JFR.
	CRJetty CRFlags = 1 << 1
	// CRSuspendDone and CRFlushErrDone mark the records a device writes
	// when a suspended or flushed queue has finished.
	CRSuspendDone  CRFlags = 1 << 2
	CRFlushErrDone CRFlags = 1 << 3
	// CRImm marks a record that carries immediate data (an extension).
	CRImm CRFlags = 1 << 8
	// CRSolicited marks a receive of a solicited message (an extension).
	CRSolicited CRFlags = 1 << 9
)

// String lists the flags.
func (f CRFlags) String() string { return provider.CRFlags(f).String() }

// Kind says what a Descriptor names, with the values of
// urma_target_type_t.
type Kind uint8

// Kinds of descriptors.
const (
	KindJFR   Kind = 0
	KindJetty Kind = 1
	// KindJettyGroup is a jetty group (see JettyGroup), imported with
	// ImportJetty.
	KindJettyGroup Kind = 2
)

// String returns the URMA name: "JFR", "JETTY" or "JETTY_GROUP".
func (k Kind) String() string { return provider.JettyKind(k).String() }

// Descriptor is what a peer needs to import a JFR or Jetty: its id, kind,
// transport mode and token policy. The token value travels separately. It
// marshals to DescriptorSize bytes; UnmarshalBinary rejects malformed
// input.
type Descriptor struct {
	ID          urma.JettyID
	Kind        Kind
	Mode        urma.TransportMode
	TokenPolicy segment.TokenPolicy
}

// DescriptorSize is the length of a marshalled Descriptor.
const DescriptorSize = 32

// DescriptorOf converts the provider's form.
func DescriptorOf(p provider.JettyDesc) Descriptor {
	return Descriptor{ID: urma.JettyIDOf(p.ID), Kind: Kind(p.Kind), Mode: urma.TransportMode(p.Mode),
		TokenPolicy: segment.TokenPolicy(p.TokenPolicy)}
}

// Raw is the provider's form.
func (d Descriptor) Raw() provider.JettyDesc {
	return provider.JettyDesc{ID: d.ID.Raw(), Kind: provider.JettyKind(d.Kind), Mode: provider.TransportMode(d.Mode),
		TokenPolicy: provider.TokenPolicy(d.TokenPolicy)}
}

// String is a one-line human form.
func (d Descriptor) String() string { return d.Raw().String() }

// Validate checks the kind, mode and token policy.
func (d Descriptor) Validate() error { return d.Raw().Validate() }

// MarshalBinary encodes the descriptor in DescriptorSize bytes.
func (d Descriptor) MarshalBinary() ([]byte, error) { return d.Raw().MarshalBinary() }

// UnmarshalBinary decodes what MarshalBinary wrote and rejects anything
// else, leaving d unchanged then.
func (d *Descriptor) UnmarshalBinary(b []byte) error {
	var p provider.JettyDesc
	if err := p.UnmarshalBinary(b); err != nil {
		return err
	}
	*d = DescriptorOf(p)
	return nil
}

// Attr is what JFS.Query and Jetty.Query report.
type Attr struct {
	ID    urma.JettyID
	State urma.State
	Mode  urma.TransportMode
	Depth int
	// Outstanding is the number of requests holding a queue slot.
	Outstanding int
}

func attrOf(p provider.QueueAttr) Attr {
	return Attr{ID: urma.JettyIDOf(p.ID), State: urma.State(p.State), Mode: urma.TransportMode(p.Mode),
		Depth: p.Depth, Outstanding: p.Outstanding}
}

// JFRAttr is what JFR.Query reports.
type JFRAttr struct {
	ID    urma.JettyID
	State urma.JFRState
	Mode  urma.TransportMode
	Depth int
	// Outstanding is the number of posted receives not yet consumed.
	Outstanding int
}

func jfrStateOf(s provider.State) (urma.JFRState, bool) {
	switch s {
	case provider.StateReset:
		return urma.JFRStateReset, true
	case provider.StateReady:
		return urma.JFRStateReady, true
	case provider.StateError:
		return urma.JFRStateError, true
	}
	return 0, false
}

// PostError reports the first request Post did not queue. The requests
// before Index were queued; the one at Index and those after it were not.
// A queue that refuses post after post because it is full (urma.ErrAgain)
// returns one *PostError for them, so that back-pressure allocates
// nothing: read it, do not change it.
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
