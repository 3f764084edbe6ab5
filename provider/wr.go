package provider

import "fmt"

// MemRef is a local segment or an imported target segment, as an SGE names it.
type MemRef interface {
	Desc() SegmentDesc
}

// SGE is one scatter/gather element: Len bytes at virtual address Addr inside
// the segment Seg. Addr is an address in the segment owner's address space,
// between Seg.Desc().VA and VA+Len.
type SGE struct {
	Seg  MemRef
	Addr uint64
	Len  uint32
}

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
//   - WRITE_NOTIFY: as WRITE, then Imm stored at Notify.
//   - SEND_INVALIDATE: as SEND, and Invalidate.
//
// Inline bytes are data only with FlagInline set; a request that has them
// without the flag is refused.
//   - NOP: nothing.
//
// Hint is target_hint: the member of a jetty group a request goes to
// under GroupPolicyHashHint (see PickMember). It sits in the padding after
// Opcode, so that a request stays two cache lines.
//
// Target names the imported JFR or Jetty that a request goes to (Dest); it
// may be nil on a Jetty bound in RC mode, which always uses the bound
// remote.
type WR struct {
	Opcode  Opcode
	Hint    uint8
	Flags   WRFlags
	UserCtx uint64
	Target  *RemoteRef
	Local   []SGE
	Remote  SGE
	Inline  []byte
	Imm     uint64
	Compare uint64
	Operand uint64

	// Notify and Invalidate serve WRITE_NOTIFY and SEND_INVALIDATE.
	//
	// Notify is the 8-byte, 8-aligned range of an imported segment that a
	// WRITE_NOTIFY stores Imm (its notify_data) into once every byte of
	// the write is visible (UMDK's second destination SGE).
	Notify SGE
	// Invalidate names the imported segment, owned by the receiver, whose
	// token id a SEND_INVALIDATE invalidates on delivery (urma_send_wr_t's
	// tseg). A *segment.Target reads as one: it begins with its Target.
	Invalidate *Target
}

// Invalidated returns the segment a SEND_INVALIDATE names, nil for none.
func (w *WR) Invalidated() Target {
	if w.Invalidate == nil {
		return nil
	}
	return *w.Invalidate
}

// RemoteRef holds the Remote a request goes to. A WR names its remote
// through one, so that the SDK's requests, whose remotes begin with a
// RemoteRef, have the layout of the provider's and reach it as they are.
type RemoteRef struct {
	Remote Remote
}

// Ref returns a RemoteRef of r, for a request built outside the SDK; nil
// for a nil r.
func Ref(r Remote) *RemoteRef {
	if r == nil {
		return nil
	}
	return &RemoteRef{Remote: r}
}

// Dest returns the Remote the request names, nil for none.
func (w *WR) Dest() Remote {
	if w.Target == nil {
		return nil
	}
	return w.Target.Remote
}

// DataLen is the number of bytes the request carries: the inline data's
// length, or the sum of the local SGE lengths.
func (w *WR) DataLen() uint64 {
	if w.InlineBytes() {
		return uint64(len(w.Inline))
	}
	var n uint64
	for i := range w.Local {
		n += uint64(w.Local[i].Len)
	}
	return n
}

// InlineBytes reports whether the request's data is in Inline. An inline
// request (FlagInline) with no Inline bytes takes its data from its Local
// SGEs, copied during the post as verbs' IBV_SEND_INLINE does: the buffers
// may be reused as soon as the post returns.
func (w *WR) InlineBytes() bool { return w.Flags&FlagInline != 0 && len(w.Inline) > 0 }

// RecvWR is a receive work request (urma_jfr_wr_t): the buffers an incoming
// message is scattered into, in order.
type RecvWR struct {
	UserCtx uint64
	Local   []SGE
}

// CR is a completion record (urma_cr_t).
type CR struct {
	Status CRStatus
	// Opcode is what a receive-side record (Flags has CRFlagRecv)
	// completed: a SEND, SEND_IMM, SEND_INVALIDATE or WRITE_IMM, as
	// urma_cr_opcode_t distinguishes. It is zero on send-side records.
	Opcode CROpcode
	// WROpcode is the opcode of the request a send-side record completes
	// (an extension: urma_cr_t has no such field). It is zero on
	// receive-side records.
	WROpcode Opcode
	Flags    CRFlags
	// Len is completion_len: bytes received, or bytes moved by a send-side
	// request.
	Len     uint32
	UserCtx uint64
	// LocalID is the id of the JFS, JFR or Jetty the record belongs to.
	LocalID uint32
	// RemoteID is the sender of a received message, or the target of a
	// send-side request.
	RemoteID JettyID
	// Imm is the immediate data of a record with CRFlagImm; on a
	// SEND_INVALIDATE receive it holds the invalidated token id in its
	// low 32 bits (urma_cr_t's invalid_token, see InvalidTokenID).
	Imm uint64
}

// InvalidTokenID is the token id a SEND_INVALIDATE receive invalidated, and
// ok false for any other record.
func (c *CR) InvalidTokenID() (id uint32, ok bool) {
	if c.Flags&CRFlagRecv == 0 || c.Opcode != CROpSendInvalidate || c.Status != CRSuccess {
		return 0, false
	}
	return uint32(c.Imm), true
}

// String is a readable one-line form.
func (c CR) String() string {
	side := "send"
	if c.Flags&CRFlagRecv != 0 {
		side = "recv"
	}
	op := c.WROpcode.String()
	if side == "recv" {
		op = c.Opcode.String()
	}
	s := fmt.Sprintf("cr{%s %s %v len=%d ctx=%#x local=%d remote=%v", side, op, c.Status,
		c.Len, c.UserCtx, c.LocalID, c.RemoteID)
	if c.Flags&CRFlagImm != 0 {
		s += fmt.Sprintf(" imm=%#x", c.Imm)
	}
	if c.Flags&CRFlagSolicited != 0 {
		s += " solicited"
	}
	if id, ok := c.InvalidTokenID(); ok {
		s += fmt.Sprintf(" invalidated=%d", id)
	}
	return s + "}"
}
