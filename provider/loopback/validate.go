package loopback

import "github.com/urma-go/sdk/provider"

// validate applies the post-time checks of docs/semantics.md and resolves
// the request's target.
func (q *sendq) validate(w *provider.WR) (*remote, error) {
	op := w.Opcode
	switch {
	case op == provider.OpNOP, op.IsSend() && op != provider.OpSendInvalidate,
		op == provider.OpWrite, op == provider.OpWriteImm, op == provider.OpRead, op.IsAtomic():
	default:
		return nil, provider.Errorf(provider.ErrNotSupported, "opcode %v", op)
	}
	if q.mode == provider.UM && op.IsOneSided() {
		return nil, provider.Errorf(provider.ErrNotSupported, "%v is one-sided; UM transport sends messages only", op)
	}
	if op == provider.OpNOP {
		return nil, nil
	}
	rem, err := q.target(w)
	if err != nil {
		return nil, err
	}
	inline := w.Flags&provider.FlagInline != 0
	if inline {
		if op == provider.OpRead || op.IsAtomic() {
			return nil, provider.Errorf(provider.ErrInvalid, "inline data is for WRITE and SEND, not %v", op)
		}
		if len(w.Inline) > q.maxInline {
			return nil, provider.Errorf(provider.ErrInvalid, "%d bytes inline, limit %d", len(w.Inline), q.maxInline)
		}
	} else {
		if len(w.Local) > q.maxSGE {
			return nil, provider.Errorf(provider.ErrInvalid, "%d sges, queue allows %d", len(w.Local), q.maxSGE)
		}
		for i := range w.Local {
			if _, err := q.ctx.localSeg(w.Local[i].Seg); err != nil {
				return nil, err
			}
		}
	}
	if op == provider.OpRead && len(w.Local) == 0 {
		return nil, provider.Errorf(provider.ErrInvalid, "READ needs a local sge")
	}
	if w.DataLen() > maxMsgSize {
		return nil, provider.Errorf(provider.ErrInvalid, "%d bytes exceed the message size limit %d", w.DataLen(), maxMsgSize)
	}
	if op.IsAtomic() {
		if len(w.Local) != 1 || w.Local[0].Len != 8 {
			return nil, provider.Errorf(provider.ErrInvalid, "%v needs one 8-byte local sge for the old value", op)
		}
		if w.Remote.Len != 8 && w.Remote.Len != 0 {
			return nil, provider.Errorf(provider.ErrInvalid, "%v operates on 8 bytes, remote sge has %d", op, w.Remote.Len)
		}
		if w.Remote.Addr%8 != 0 {
			return nil, provider.Errorf(provider.ErrInvalid, "%v remote address %#x is not 8-byte aligned", op, w.Remote.Addr)
		}
	}
	if op.IsOneSided() {
		t, ok := provider.RawMem(w.Remote.Seg).(*target)
		if !ok || t == nil {
			return nil, provider.Errorf(provider.ErrInvalid, "%v needs an imported target segment in Remote", op)
		}
		if t.closed.Load() {
			return nil, errClosed("target segment")
		}
		if op.IsAtomic() && t.ref.mem == nil {
			return nil, provider.Errorf(provider.ErrNotSupported,
				"%v on registered caller memory of another process: the loopback provider reaches it only by copying; allocate the target with segment.Alloc for atomics", op)
		}
	}
	return rem, nil
}

// target resolves where a request goes, by transport mode.
func (q *sendq) target(w *provider.WR) (*remote, error) {
	if q.mode == provider.RC {
		b := q.jetty.bound
		if b == nil {
			return nil, provider.Errorf(provider.ErrInvalid, "RC jetty is not bound")
		}
		if w.Target != nil {
			if r, _ := provider.RawRemote(w.Target).(*remote); r != b {
				return nil, provider.Errorf(provider.ErrInvalid, "RC jetty is bound to %v, request names another target", b.desc.ID)
			}
		}
		if b.closed.Load() {
			return nil, errClosed("bound remote jetty")
		}
		return b, nil
	}
	if w.Target == nil {
		return nil, provider.Errorf(provider.ErrInvalid, "%v needs a Target in %v mode", w.Opcode, q.mode)
	}
	r, err := q.ctx.ownRemote(w.Target)
	if err != nil {
		return nil, err
	}
	if r.desc.Mode != q.mode {
		return nil, provider.Errorf(provider.ErrInvalid, "target is %v, queue is %v", r.desc.Mode, q.mode)
	}
	return r, nil
}
