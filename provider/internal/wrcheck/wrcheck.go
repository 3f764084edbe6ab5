// Package wrcheck holds the post-time checks of docs/semantics.md that do
// not depend on how a provider keeps memory or reaches targets, so that
// every provider refuses the same requests with the same errors.
package wrcheck

import (
	"math"

	"github.com/urma-go/sdk/provider"
)

// Limits are what a queue and its device allow.
type Limits struct {
	Device     string // for messages
	Mode       provider.TransportMode
	MaxSGE     int
	MaxInline  int
	MaxReadSGE int
	MaxMsgSize uint64
	AtomicOps  provider.AtomicOps
	ImmData    bool
	// Imm32 says immediate data has 32 bits (verbs), not 64.
	Imm32 bool

	// SendInvalidate and WriteNotify say the device runs those opcodes.
	SendInvalidate bool
	WriteNotify    bool
}

// Opcode refuses, with ErrNotSupported, an opcode the device or the
// queue's transport mode cannot execute.
func Opcode(w *provider.WR, l *Limits) error {
	op := w.Opcode
	switch {
	case op == provider.OpNOP, op == provider.OpSend, op == provider.OpWrite, op == provider.OpRead:
	case op == provider.OpSendImm, op == provider.OpWriteImm:
		if !l.ImmData {
			return provider.Errorf(provider.ErrNotSupported, "%v: %s has no immediate data", op, l.Device)
		}
	case op == provider.OpSendInvalidate, op == provider.OpWriteNotify:
		return extOpcode(op, l)
	case op.IsAtomic():
		if !l.AtomicOps.Has(op) {
			return provider.Errorf(provider.ErrNotSupported, "opcode %v on %s", op, l.Device)
		}
	default:
		return provider.Errorf(provider.ErrNotSupported, "opcode %v on %s", op, l.Device)
	}
	if l.Mode == provider.UM && op.IsOneSided() {
		return provider.Errorf(provider.ErrNotSupported, "%v is one-sided; UM transport sends messages only", op)
	}
	return nil
}

// Shape checks the request's data against the limits: inline use and
// size, SGE counts, READ scatter, total length, immediate size and the
// operands of atomics. It does not look at what the SGEs name.
func Shape(w *provider.WR, l *Limits) error {
	op := w.Opcode
	size := w.DataLen()
	if f := w.Flags &^ provider.WRFlagsKnown; f != 0 {
		return provider.Errorf(provider.ErrInvalid, "unknown request flags %#x", uint32(f))
	}
	if f := w.Flags & (provider.FlagPlaceOrderMask | provider.FlagCompOrder); f != 0 {
		// No provider orders placement or completion beyond what every
		// request gets (a queue's requests complete in order; Fence
		// orders after reads and atomics): accepting the flags would
		// promise what nothing keeps.
		return provider.Errorf(provider.ErrNotSupported, "flags %v: requests of a queue complete in order; use Fence to order a request after earlier reads and atomics", f)
	}
	if len(w.Inline) > 0 && w.Flags&provider.FlagInline == 0 {
		return provider.Errorf(provider.ErrInvalid, "%d bytes in Inline without the Inline flag: set it, or put the data in Local", len(w.Inline))
	}
	if w.Flags&provider.FlagInline != 0 {
		if op == provider.OpRead || op.IsAtomic() {
			return provider.Errorf(provider.ErrInvalid, "inline data is for WRITE and SEND, not %v", op)
		}
		if len(w.Inline) > 0 && len(w.Local) > 0 {
			return provider.Errorf(provider.ErrInvalid, "an inline request has its data in Inline or in Local SGEs, not both")
		}
		if size > uint64(l.MaxInline) {
			return provider.Errorf(provider.ErrInvalid, "%d bytes inline, limit %d", size, l.MaxInline)
		}
	}
	if !w.InlineBytes() && len(w.Local) > l.MaxSGE {
		return provider.Errorf(provider.ErrInvalid, "%d sges, queue allows %d", len(w.Local), l.MaxSGE)
	}
	if op == provider.OpRead {
		if len(w.Local) == 0 {
			return provider.Errorf(provider.ErrInvalid, "READ needs a local sge")
		}
		if len(w.Local) > l.MaxReadSGE {
			return provider.Errorf(provider.ErrInvalid, "READ scatters into %d sges, %s allows %d", len(w.Local), l.Device, l.MaxReadSGE)
		}
	}
	if size > l.MaxMsgSize {
		return provider.Errorf(provider.ErrInvalid, "%d bytes exceed the message size limit %d", size, l.MaxMsgSize)
	}
	// A range that wraps around the address space lies in no segment. It
	// is refused here, not left to the execution, because a responder that
	// checks a range by its end (iova+length <= segment end, as rxe's
	// range check does) lets a wrapped end through to its page lookup.
	if !w.InlineBytes() {
		for i := range w.Local {
			if wraps(w.Local[i].Addr, uint64(w.Local[i].Len)) {
				return provider.Errorf(provider.ErrInvalid, "local sge %d: %d bytes at %#x wrap around the address space", i, w.Local[i].Len, w.Local[i].Addr)
			}
		}
	}
	if (op == provider.OpWrite || op == provider.OpWriteImm || op == provider.OpRead) && uint64(w.Remote.Len) != size {
		// The remote SGE is the range the request touches, as URMA's
		// urma_sge_t says: a mismatch is refused rather than one of the
		// two lengths silently winning.
		return provider.Errorf(provider.ErrInvalid, "%v of %d bytes with a remote sge of %d bytes: they must be equal", op, size, w.Remote.Len)
	}
	if op.IsOneSided() {
		n := max(size, uint64(w.Remote.Len))
		if op.IsAtomic() {
			n = 8
		}
		if wraps(w.Remote.Addr, n) {
			return provider.Errorf(provider.ErrInvalid, "remote range: %d bytes at %#x wrap around the address space", n, w.Remote.Addr)
		}
	}
	if (op == provider.OpWriteImm || op == provider.OpSendImm) && w.Imm > math.MaxUint32 && l.Imm32 {
		return provider.Errorf(provider.ErrInvalid, "immediate data %#x: %s carries 32 bits", w.Imm, l.Device)
	}
	if op == provider.OpWriteNotify || op == provider.OpSendInvalidate {
		if err := extShape(w, size); err != nil {
			return err
		}
	}
	if op.IsAtomic() {
		if len(w.Local) != 1 || w.Local[0].Len != 8 {
			return provider.Errorf(provider.ErrInvalid, "%v needs one 8-byte local sge for the old value", op)
		}
		if w.Remote.Len != 8 {
			return provider.Errorf(provider.ErrInvalid, "%v operates on 8 bytes, remote sge has %d", op, w.Remote.Len)
		}
		if w.Remote.Addr%8 != 0 {
			return provider.Errorf(provider.ErrInvalid, "%v remote address %#x is not 8-byte aligned", op, w.Remote.Addr)
		}
	}
	return nil
}

func wraps(addr, n uint64) bool { return addr+n < addr }

// InSegment refuses, with ErrRange, an SGE that does not lie inside the
// segment it names, [va, va+n). Receive buffers are
// checked with it when they are posted: left to the delivery, a bad
// buffer would fail the sender of whichever message reached it, and each
// device reports that differently.
func InSegment(sg *provider.SGE, va, n uint64) error {
	if !Inside(sg, va, n) {
		return outside(sg, va, n)
	}
	return nil
}

// Inside tells whether sg lies inside [va, va+n): InSegment without its
// error, small enough to inline into a post's loop, which builds the
// error (with InSegment) only for an SGE that is not.
func Inside(sg *provider.SGE, va, n uint64) bool {
	// By the offset into the segment, which cannot wrap.
	off := sg.Addr - va
	return sg.Addr >= va && off <= n && uint64(sg.Len) <= n-off
}

func outside(sg *provider.SGE, va, n uint64) error {
	return provider.Errorf(provider.ErrRange, "%d bytes at %#x are not inside the segment [%#x, %#x)", sg.Len, sg.Addr, va, va+n)
}
