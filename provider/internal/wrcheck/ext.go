package wrcheck

import "github.com/urma-go/sdk/provider"

// NotifyLen is the size of a WRITE_NOTIFY's notify data and of the range
// it is stored in.
const NotifyLen = 8

// extOpcode is Opcode for SEND_INVALIDATE and WRITE_NOTIFY, which a device
// runs or not as a whole, and which need a connection: a datagram (UM)
// invalidates nothing and writes nothing (UMDK's UM requests are SEND and
// SEND_IMM only).
func extOpcode(op provider.Opcode, l *Limits) error {
	if op == provider.OpSendInvalidate && !l.SendInvalidate || op == provider.OpWriteNotify && !l.WriteNotify {
		return provider.Errorf(provider.ErrNotSupported, "opcode %v on %s (see DeviceAttr.SendInvalidate, WriteNotify)", op, l.Device)
	}
	if l.Mode == provider.UM {
		return provider.Errorf(provider.ErrNotSupported, "%v needs RM or RC transport; UM sends messages only", op)
	}
	return nil
}

// extShape is Shape's part for SEND_INVALIDATE and WRITE_NOTIFY: the
// segment to invalidate is named, the notify range is 8 aligned bytes
// and the write's remote range is as long as its data.
func extShape(w *provider.WR, size uint64) error {
	if w.Opcode == provider.OpSendInvalidate {
		if w.Invalidated() == nil {
			return provider.Errorf(provider.ErrInvalid, "SEND_INVALIDATE names no segment to invalidate: set Invalidate to an imported segment of the receiver")
		}
		return nil
	}
	if uint64(w.Remote.Len) != size {
		return provider.Errorf(provider.ErrInvalid, "%v of %d bytes with a remote sge of %d bytes: they must be equal", w.Opcode, size, w.Remote.Len)
	}
	n := w.Notify
	if n.Seg == nil {
		return provider.Errorf(provider.ErrInvalid, "WRITE_NOTIFY has no notify target: set Notify to 8 bytes of an imported segment")
	}
	if n.Len != NotifyLen {
		return provider.Errorf(provider.ErrInvalid, "WRITE_NOTIFY notify target of %d bytes: it must be %d", n.Len, NotifyLen)
	}
	if n.Addr%NotifyLen != 0 {
		return provider.Errorf(provider.ErrInvalid, "WRITE_NOTIFY notify address %#x is not 8-byte aligned", n.Addr)
	}
	if wraps(n.Addr, NotifyLen) {
		return provider.Errorf(provider.ErrInvalid, "WRITE_NOTIFY notify address %#x wraps around the address space", n.Addr)
	}
	return nil
}

// Notify checks the notify target of a WRITE_NOTIFY against what its
// import says of the segment: the range inside it, and WRITE granted.
// A provider calls it once it knows the target is an import of its own.
func Notify(w *provider.WR, d provider.SegmentDesc) error {
	if d.Access&provider.AccessWrite == 0 {
		return provider.Errorf(provider.ErrPermission, "WRITE_NOTIFY notify target: segment %v does not grant WRITE", d)
	}
	if !Inside(&w.Notify, d.VA, d.Len) {
		return outside(&w.Notify, d.VA, d.Len)
	}
	return nil
}

// Invalidate checks the segment a SEND_INVALIDATE names against the
// message's receiver, dest: the segment must be one of the receiver's
// (same EID and UASID), for a sender may invalidate only what the
// receiver granted it, never a third party's segment.
func Invalidate(d provider.SegmentDesc, dest provider.JettyID) error {
	if d.EID != dest.EID || d.UASID != dest.UASID {
		return provider.Errorf(provider.ErrPermission, "SEND_INVALIDATE of segment %v: it does not belong to the receiver %v", d, dest)
	}
	return nil
}
