package jetty

import (
	"context"
	"sync"

	"github.com/urma-go/sdk/internal/viewio"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// sender is the send side shared by JFS and Jetty. Its methods are promoted
// to both.
type sender struct {
	p    provider.Sender
	kind string
	// jfc receives the queue's records; it finishes requests through views.
	jfc *JFC
	// mu guards the scratch request that the helpers build, so that
	// their posts allocate nothing (a request built on the stack would
	// escape through the provider's Post).
	mu  sync.Mutex
	one [1]provider.WR
	sge [1]provider.SGE
	// again is the error of the last refusal of a full queue (see
	// postErrors).
	again postErrors
}

// Post queues a batch of work requests (urma_post_jfs_wr). On error it
// returns a *PostError: requests before its Index were queued, the rest were
// not. A full queue is urma.ErrAgain: poll completions and post the rest.
// Post keeps no reference to wrs.
func (s *sender) Post(wrs []WR) error {
	// The requests have the provider's layout: they go as they are, with
	// nothing built, copied or locked here. post's test is made here, so
	// that a post without views costs no call on the way.
	raw := rawWRs(wrs)
	var n int
	var err error
	if !viewio.Made() || !usesViews(raw) {
		n, err = s.p.Post(raw)
	} else {
		n, err = s.postViews(raw)
	}
	if err != nil {
		return s.again.of(s.kind, "post", n, err)
	}
	return nil
}

// dropRefs clears what the scratch requests ws refer to (the caller's
// remotes, SGE lists, segments and inline bytes), so that they keep
// nothing of a post alive; the other fields are overwritten by the next.
func dropRefs(ws []provider.WR) {
	for i := range ws {
		w := &ws[i]
		w.Target, w.Local, w.Remote.Seg, w.Inline = nil, nil, nil, nil
		w.Notify.Seg, w.Invalidate = nil, nil
	}
}

// Flush returns WR_FLUSH_ERR records for the requests still queued, after
// the queue went to StateError, or to urma.StateSuspended (see
// JFSConfig.ErrorSuspend) (urma_flush_jfs / urma_flush_jetty).
func (s *sender) Flush(crs []CR) (int, error) {
	raw := rawCRs(crs)
	n, err := s.p.Flush(raw)
	n = s.jfc.views.finish(raw[:n])
	if err != nil {
		return n, opErr(s.kind+" flush", err)
	}
	return n, nil
}

// Advise prepares the path to a remote JFR or Jetty (urma_advise_jfr), or
// to every member of an imported jetty group. It is required on IB
// transport before the first request to it in RM mode and harmless
// elsewhere. ctx bounds the connection it may make; once ctx is
// done Advise returns its error.
func (s *sender) Advise(ctx context.Context, r *Remote) error {
	if r == nil {
		return opErr(s.kind+" advise", provider.Errorf(urma.ErrInvalid, "nil remote"))
	}
	for _, m := range groupMembers(r.ref.Remote) {
		if err := s.p.Advise(ctx, m); err != nil {
			return opErr(s.kind+" advise", err)
		}
	}
	return nil
}

// Unadvise undoes Advise.
func (s *sender) Unadvise(r *Remote) error {
	if r == nil {
		return opErr(s.kind+" unadvise", provider.Errorf(urma.ErrInvalid, "nil remote"))
	}
	for _, m := range groupMembers(r.ref.Remote) {
		if err := s.p.Unadvise(m); err != nil {
			return opErr(s.kind+" unadvise", err)
		}
	}
	return nil
}

// Query returns the queue's id, state, mode, depth and occupancy.
func (s *sender) Query() (Attr, error) {
	a, err := s.p.Query()
	if err != nil {
		return Attr{}, opErr(s.kind+" query", err)
	}
	return attrOf(a), nil
}

// Modify changes the queue's state: to StateError, or from StateError to
// StateReset and then StateReady to use it again. A queue suspended on an
// error (JFSConfig.ErrorSuspend) resumes its queued requests on a Modify
// to StateReady.
func (s *sender) Modify(st urma.State) error {
	if err := s.p.Modify(provider.State(st)); err != nil {
		return opErr(s.kind+" modify", err)
	}
	return nil
}

// postOne posts one signaled request of opcode op to to, with the local
// range local (none when nil), the remote range remote and the
// request's own values imm, compare and operand.
func (s *sender) postOne(op urma.Opcode, to *Remote, local *segment.SGE, remote segment.SGE, imm, compare, operand uint64, flags Flags, userCtx uint64) error {
	s.mu.Lock()
	// Filled field by field: a literal stored through a pointer is built
	// in a temporary and copied.
	w := &s.one[0]
	w.Opcode, w.Flags, w.UserCtx = provider.Opcode(op), provider.WRFlags(flags|Signaled), userCtx
	w.Target = nil
	if to != nil {
		w.Target = &to.ref
	}
	w.Local = nil
	if local != nil {
		s.sge[0] = local.Raw()
		w.Local = s.sge[:]
	}
	w.Remote, w.Inline = remote.Raw(), nil
	w.Imm, w.Compare, w.Operand = imm, compare, operand
	n, err := s.post(s.one[:])
	dropRefs(s.one[:])
	s.sge[0].Seg = nil
	s.mu.Unlock()
	if err != nil {
		return s.again.of(s.kind, op.String(), n, err)
	}
	return nil
}

// The helpers below post one signaled request each. They share one rule
// for their arguments: first the imported JFR or Jetty the request goes
// to, then the remote range (an SGE of a segment.Target imported from the
// same peer), then the local range, then the request's own values, then
// flags and the user context. Every one-sided request (WRITE, READ, the
// atomics) names the peer's JFR or Jetty as a SEND does: import it with
// ImportJFR or ImportJetty (or take it from a bootstrap.Bundle) besides
// the segment. to may be nil only on a Jetty bound in RC mode, which uses
// the bound remote.

// Write posts a WRITE of local to remote, a range of a segment.Target.
// to is the peer's JFR or Jetty imported with ImportJFR or ImportJetty:
// one-sided requests go through it as a SEND does (nil only on a bound RC
// Jetty). flags can add Fence, Solicited or Inline.
func (s *sender) Write(to *Remote, remote, local segment.SGE, flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpWrite, to, &local, remote, 0, 0, 0, flags, userCtx)
}

// WriteImm posts a WRITE_IMM: the data lands in remote and the peer's JFR
// or Jetty to consumes a receive whose record carries imm. to is imported
// as for Write.
func (s *sender) WriteImm(to *Remote, remote, local segment.SGE, imm uint64, flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpWriteImm, to, &local, remote, imm, 0, 0, flags, userCtx)
}

// Read posts a READ of remote, a range of a segment.Target, into local.
// from is the peer's imported JFR or Jetty, as for Write.
func (s *sender) Read(from *Remote, remote, local segment.SGE, flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpRead, from, &local, remote, 0, 0, 0, flags, userCtx)
}

// Send posts a SEND of local to the peer's JFR or Jetty.
func (s *sender) Send(to *Remote, local segment.SGE, flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpSend, to, &local, segment.SGE{}, 0, 0, 0, flags, userCtx)
}

// SendImm posts a SEND_IMM; the receiver's record carries imm.
func (s *sender) SendImm(to *Remote, local segment.SGE, imm uint64, flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpSendImm, to, &local, segment.SGE{}, imm, 0, 0, flags, userCtx)
}

// CompareSwap posts a CAS on the 8 aligned bytes of remote: if they equal
// compare they become swap. The old value lands in result (8 local bytes,
// host byte order). to is the peer's imported JFR or Jetty, as for Write.
// Caller.CompareSwap posts one and waits for the old value.
func (s *sender) CompareSwap(to *Remote, remote, result segment.SGE, compare, swap uint64, flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpCAS, to, &result, remote, 0, compare, swap, flags, userCtx)
}

// FetchAdd posts a FADD of add to the 8 aligned bytes of remote; the old
// value lands in result. to is the peer's imported JFR or Jetty, as for
// Write. Caller.FetchAdd posts one and waits for the old value.
func (s *sender) FetchAdd(to *Remote, remote, result segment.SGE, add uint64, flags Flags, userCtx uint64) error {
	return s.Atomic(urma.OpFAdd, to, remote, result, add, flags, userCtx)
}

// Atomic posts a SWAP, FADD, FSUB, FAND, FOR or FXOR with operand on the
// 8 aligned bytes of remote; the old value lands in result. to is the
// peer's imported JFR or Jetty, as for Write.
func (s *sender) Atomic(op urma.Opcode, to *Remote, remote, result segment.SGE, operand uint64, flags Flags, userCtx uint64) error {
	if !op.IsAtomic() || op == urma.OpCAS {
		return &PostError{Op: s.kind + " atomic", Err: provider.Errorf(urma.ErrInvalid,
			"%v is not a single-operand atomic (use CompareSwap)", op)}
	}
	return s.postOne(op, to, &result, remote, 0, 0, operand, flags, userCtx)
}

// NOP posts a signaled NOP, which completes after the requests before it.
func (s *sender) NOP(flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpNOP, nil, nil, segment.SGE{}, 0, 0, 0, flags, userCtx)
}
