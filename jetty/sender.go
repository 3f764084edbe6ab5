package jetty

import (
	"context"
	"sync"

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
	// mu guards the scratch requests that Post and the helpers build in
	// the provider's form, so that a post allocates nothing once the
	// scratch has grown to the largest batch.
	mu      sync.Mutex
	one     [1]provider.WR
	sge     [1]provider.SGE
	scratch []provider.WR
}

// Post queues a batch of work requests (urma_post_jfs_wr). On error it
// returns a *PostError: requests before its Index were queued, the rest were
// not. A full queue is urma.ErrAgain: poll completions and post the rest.
// Post keeps no reference to wrs.
func (s *sender) Post(wrs []WR) error {
	s.mu.Lock()
	if cap(s.scratch) < len(wrs) {
		s.scratch = make([]provider.WR, len(wrs))
	}
	ws := s.scratch[:len(wrs)]
	for i := range wrs {
		rawWR(&ws[i], &wrs[i])
	}
	n, err := s.post(ws)
	clear(ws)
	s.mu.Unlock()
	if err != nil {
		return &PostError{Op: s.kind + " post", Index: n, Err: err}
	}
	return nil
}

// Flush returns WR_FLUSH_ERR records for the requests still queued, after
// the queue went to StateError (urma_flush_jfs / urma_flush_jetty).
func (s *sender) Flush(crs []CR) (int, error) {
	raw := rawCRs(crs)
	n, err := s.p.Flush(raw)
	n = s.jfc.views.finish(raw[:n])
	if err != nil {
		return n, opErr(s.kind+" flush", err)
	}
	return n, nil
}

// Advise prepares the path to a remote JFR or Jetty (urma_advise_jfr). It is
// required on IB transport before the first request to it in RM mode and
// harmless elsewhere. ctx bounds the connection it may make; once ctx is
// done Advise returns its error.
func (s *sender) Advise(ctx context.Context, r *Remote) error {
	if r == nil {
		return opErr(s.kind+" advise", provider.Errorf(urma.ErrInvalid, "nil remote"))
	}
	if err := s.p.Advise(ctx, r.p); err != nil {
		return opErr(s.kind+" advise", err)
	}
	return nil
}

// Unadvise undoes Advise.
func (s *sender) Unadvise(r *Remote) error {
	if r == nil {
		return opErr(s.kind+" unadvise", provider.Errorf(urma.ErrInvalid, "nil remote"))
	}
	if err := s.p.Unadvise(r.p); err != nil {
		return opErr(s.kind+" unadvise", err)
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
// StateReset and then StateReady to use it again.
func (s *sender) Modify(st urma.State) error {
	if err := s.p.Modify(provider.State(st)); err != nil {
		return opErr(s.kind+" modify", err)
	}
	return nil
}

// postOne posts the scratch request built by fill.
func (s *sender) postOne(op urma.Opcode, to *Remote, flags Flags, userCtx uint64, fill func(w *provider.WR)) error {
	s.mu.Lock()
	// Zeroed, then filled field by field: a literal stored through a
	// pointer is built in a temporary and copied.
	w := &s.one[0]
	*w = provider.WR{}
	w.Opcode, w.Flags, w.UserCtx = provider.Opcode(op), provider.WRFlags(flags|Signaled), userCtx
	if to != nil {
		w.Target = to.p
	}
	fill(w)
	n, err := s.post(s.one[:])
	*w = provider.WR{}
	s.sge[0] = provider.SGE{}
	s.mu.Unlock()
	if err != nil {
		return &PostError{Op: s.kind + " " + op.String(), Index: n, Err: err}
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
	return s.postOne(urma.OpWrite, to, flags, userCtx, func(w *provider.WR) {
		s.sge[0] = local.Raw()
		w.Local, w.Remote = s.sge[:], remote.Raw()
	})
}

// WriteImm posts a WRITE_IMM: the data lands in remote and the peer's JFR
// or Jetty to consumes a receive whose record carries imm. to is imported
// as for Write.
func (s *sender) WriteImm(to *Remote, remote, local segment.SGE, imm uint64, flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpWriteImm, to, flags, userCtx, func(w *provider.WR) {
		s.sge[0] = local.Raw()
		w.Local, w.Remote, w.Imm = s.sge[:], remote.Raw(), imm
	})
}

// Read posts a READ of remote, a range of a segment.Target, into local.
// from is the peer's imported JFR or Jetty, as for Write.
func (s *sender) Read(from *Remote, remote, local segment.SGE, flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpRead, from, flags, userCtx, func(w *provider.WR) {
		s.sge[0] = local.Raw()
		w.Local, w.Remote = s.sge[:], remote.Raw()
	})
}

// Send posts a SEND of local to the peer's JFR or Jetty.
func (s *sender) Send(to *Remote, local segment.SGE, flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpSend, to, flags, userCtx, func(w *provider.WR) {
		s.sge[0] = local.Raw()
		w.Local = s.sge[:]
	})
}

// SendImm posts a SEND_IMM; the receiver's record carries imm.
func (s *sender) SendImm(to *Remote, local segment.SGE, imm uint64, flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpSendImm, to, flags, userCtx, func(w *provider.WR) {
		s.sge[0] = local.Raw()
		w.Local, w.Imm = s.sge[:], imm
	})
}

// CompareSwap posts a CAS on the 8 aligned bytes of remote: if they equal
// compare they become swap. The old value lands in result (8 local bytes,
// host byte order). to is the peer's imported JFR or Jetty, as for Write.
// Caller.CompareSwap posts one and waits for the old value.
func (s *sender) CompareSwap(to *Remote, remote, result segment.SGE, compare, swap uint64, flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpCAS, to, flags, userCtx, func(w *provider.WR) {
		s.sge[0] = result.Raw()
		w.Local, w.Remote, w.Compare, w.Operand = s.sge[:], remote.Raw(), compare, swap
	})
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
	return s.postOne(op, to, flags, userCtx, func(w *provider.WR) {
		s.sge[0] = result.Raw()
		w.Local, w.Remote, w.Operand = s.sge[:], remote.Raw(), operand
	})
}

// NOP posts a signaled NOP, which completes after the requests before it.
func (s *sender) NOP(flags Flags, userCtx uint64) error {
	return s.postOne(urma.OpNOP, nil, flags, userCtx, func(*provider.WR) {})
}
