package loopback

import (
	"context"
	"errors"
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/wrcheck"
	"github.com/urma-go/sdk/provider/loopback/internal/sg"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
)

// segRevoked is the state of a segment whose token id a SEND_INVALIDATE
// invalidated: every access, by its owner or an importer, fails as if it
// were unregistered, while the owner keeps its memory until Close. It is
// kept apart from segDead so that an importer's record tells the two
// apart when someone looks at the page.
const segRevoked = segDead + 1

// extOpcode tells the opcodes that use WR.Notify or WR.Invalidate.
func extOpcode(op provider.Opcode) bool {
	return op == provider.OpWriteNotify || op == provider.OpSendInvalidate
}

// validateExt is validate's part for WRITE_NOTIFY and SEND_INVALIDATE.
func (q *sendq) validateExt(w *provider.WR, rem *remote) error {
	if w.Opcode == provider.OpWriteNotify {
		t := asTarget(w.Notify.Seg)
		if t == nil || t.ctx != q.ctx {
			return provider.Errorf(provider.ErrInvalid, "WRITE_NOTIFY needs a target segment imported into this context in Notify")
		}
		if t.closed.Load() {
			return errClosed("notify target segment")
		}
		if err := wrcheck.Notify(w, t.desc); err != nil {
			return err
		}
		if t.ref.mem == nil {
			// The 8 bytes are one store, which memory reached only by
			// copying (process_vm_writev) does not make.
			return provider.Errorf(provider.ErrNotSupported,
				"WRITE_NOTIFY to registered caller memory of another process: the loopback provider reaches it only by copying; allocate the notify segment with segment.Alloc")
		}
		return nil
	}
	t, _ := w.Invalidated().(*target)
	if t == nil || t.ctx != q.ctx {
		return provider.Errorf(provider.ErrInvalid, "SEND_INVALIDATE needs a segment imported into this context in Invalidate")
	}
	if t.closed.Load() {
		return errClosed("segment to invalidate")
	}
	if err := wrcheck.Invalidate(t.desc, rem.desc.ID); err != nil {
		return err
	}
	if (rem.rq.local != nil) != (t.ref.peer == nil) {
		// The receiver and the segment's owner in different processes:
		// the descriptors disagree, which wrcheck.Invalidate refuses.
		// Kept because invalidateFor writes the entry of a segment of
		// this process, and must never write a peer's read-only page.
		return provider.Errorf(provider.ErrPermission, "SEND_INVALIDATE of segment %v: it does not belong to the receiver", t.desc)
	}
	return nil
}

// invalidateFor invalidates the segment the SEND_INVALIDATE w names, once
// its receive at v is claimed, and makes cr that receive's record: the
// token id in Imm, no immediate flag. The segment belongs to v's context
// (validateExt); the owner is asked when that is another process's. One
// that its owner unregistered meanwhile has nothing left to invalidate,
// and the message is delivered all the same. It returns the status the
// request fails with when the owner could not be asked.
func invalidateFor(cr *provider.CR, w *provider.WR, v *rqView) provider.CRStatus {
	t := w.Invalidated().(*target)
	cr.Flags &^= provider.CRFlagImm
	cr.Imm = uint64(t.desc.TokenID)
	if v.local == nil {
		return invalidateRemote(t, v.peer)
	}
	owner := v.local.ctx
	// Under the owner's lock, which a handle's reuse takes: the entry is
	// still t's segment's when its generation matches.
	owner.mu.Lock()
	if t.ref.ent.gen.Load() == t.ref.gen {
		t.ref.ent.state.CompareAndSwap(segLive, segRevoked)
	}
	owner.mu.Unlock()
	return provider.CRSuccess
}

// invalidateRemote asks the owner's process p to invalidate t's segment,
// presenting the token t was imported with: only the owner writes its
// segments' entries, which peers map read-only, and it checks the token
// as an import does, so a peer invalidates only what it was granted.
func invalidateRemote(t *target, p *peerConn) provider.CRStatus {
	b, _ := t.desc.MarshalBinary()
	_, err := p.rpc(context.Background(), wire.InvalidateSeg, (&wire.Buf{Bytes: b}).U32(t.token).Bytes, 0)
	switch {
	case err == nil, errors.Is(err, provider.ErrNotFound):
		return provider.CRSuccess
	case errors.Is(err, provider.ErrPermission):
		return provider.CRRemAccessAbortErr
	}
	if st := p.lossStatus(); st != provider.CRSuccess {
		return st
	}
	return provider.CRRemOperationErr
}

// answerInvalidate answers a peer's InvalidateSeg request w: the segment is
// found and its token checked as for an import, then invalidated.
func (c *lbContext) answerInvalidate(w *wire.Buf) error {
	var desc provider.SegmentDesc
	err := desc.UnmarshalBinary(w.Take(provider.SegmentDescSize))
	token := w.GetU32()
	if err != nil || w.Short || len(w.Bytes) != 0 {
		return provider.Errorf(provider.ErrInvalid, "malformed invalidate request")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	seg, err := c.findSegmentLocked(desc, token)
	if err != nil {
		return err
	}
	seg.ref.ent.state.CompareAndSwap(segLive, segRevoked)
	return nil
}

// writeNotify runs the WRITE_NOTIFY w, whose local data l holds: the data
// is placed as a WRITE's, then the notify data stored at w.Notify in one
// 8-byte atomic store, which no core sees before the data's stores.
func (q *sendq) writeNotify(w *provider.WR, seq uint64, rem *remote, l *sg.List) {
	r := &q.sg[1]
	dst := r.At(0)
	ref, st := remoteSpan(&w.Remote, uint32(l.Total()), provider.AccessWrite, dst)
	if st != provider.CRSuccess {
		q.fail(w, seq, rem, st)
		return
	}
	var ns sg.Span
	nref, st := remoteSpan(&w.Notify, wrcheck.NotifyLen, provider.AccessWrite, &ns)
	if st != provider.CRSuccess {
		ref.release()
		q.fail(w, seq, rem, st)
		return
	}
	r.Reset()
	r.Grow()
	n, err := sg.Place(r, l)
	if err != nil {
		st = ref.lossStatus()
	} else if ns.B == nil {
		st = provider.CRRemAccessAbortErr // validateExt admits mapped memory only
	} else {
		// Go's atomic store orders every store before it (a locked
		// exchange on amd64, a store-release on arm64).
		atomic.StoreUint64((*uint64)(unsafe.Pointer(&ns.B[0])), w.Imm)
	}
	nref.release()
	ref.release()
	if st != provider.CRSuccess {
		q.fail(w, seq, rem, st)
		return
	}
	q.complete(w, seq, rem, provider.CRSuccess, uint32(n))
}
