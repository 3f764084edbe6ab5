package remote

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/urma-go/sdk/provider"
)

// obj is what every proxy has: its peer and the peer's handle for the
// real object.
type obj struct {
	p *Peer
	h uint64
}

// close closes the real object. A peer that is gone took its objects with
// it, so that counts as closed; the owner numbers are forgotten once the
// object is.
func (o *obj) close(owners ...uint64) (closed bool, err error) {
	_, err = rpcClose.call(o.p.c, &hArgs{H: o.h})
	if err == nil || provider.StatusOf(err) == provider.StatusClosed {
		o.p.dropOwners(owners...)
		closed = true
	}
	if isLost(err) {
		err = nil
	}
	return closed, err
}

// handleOf is the handle of v when it is a proxy of this peer; noHandle for
// nil and foreignHandle for anything else.
func (p *Peer) handleOf(v any) uint64 {
	var o *obj
	switch x := v.(type) {
	case nil:
		return noHandle
	case *pSegment:
		if x != nil {
			o = &x.obj
		}
	case *pTarget:
		if x != nil {
			o = &x.obj
		}
	case *pRemote:
		if x != nil {
			o = &x.obj
		}
	case *pJFCE:
		if x != nil {
			o = &x.obj
		}
	case *pJFC:
		if x != nil {
			o = &x.obj
		}
	case *pJFS:
		if x != nil {
			o = &x.obj
		}
	case *pJFR:
		if x != nil {
			o = &x.obj
		}
	case *pJetty:
		if x != nil {
			o = &x.obj
		}
	case *pGroup:
		if x != nil {
			o = &x.obj
		}
	}
	if o == nil || o.p != p {
		return foreignHandle
	}
	return o.h
}

// pSegment is the proxy of a segment. mem is this process's view of its
// memory: the peer's memfd mapped here (m), or the range of caller memory
// it was registered over; nil when the peer's memory cannot be shared.
type pSegment struct {
	obj
	ctx  *pContext
	desc provider.SegmentDesc

	mu  sync.Mutex
	mem []byte
	m   *mapping
}

func (s *pSegment) Desc() provider.SegmentDesc { return s.desc }

func (s *pSegment) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mem
}

func (s *pSegment) Close() error {
	closed, err := s.close()
	if closed {
		s.ctx.disown(s)
		s.release()
	}
	return err
}

func (s *pSegment) release() {
	s.mu.Lock()
	m := s.m
	s.mem, s.m = nil, nil
	s.mu.Unlock()
	m.unmap()
}

// pTarget is the proxy of an imported segment.
type pTarget struct {
	obj
	desc provider.SegmentDesc
}

func (t *pTarget) Desc() provider.SegmentDesc { return t.desc }

func (t *pTarget) Close() error {
	_, err := t.close()
	return err
}

// pRemote is the proxy of an imported JFR or Jetty.
type pRemote struct {
	obj
	desc provider.JettyDesc
}

func (r *pRemote) Desc() provider.JettyDesc { return r.desc }

func (r *pRemote) Close() error {
	_, err := r.close()
	return err
}

// pJFCE is the proxy of a completion event channel.
type pJFCE struct{ obj }

// Wait blocks in the peer; the peer's timeout is the caller's, and a lost
// peer ends it at once.
// waitSlice bounds one wait in the peer, so that the proxy notices a ctx
// canceled without a deadline (the peer's wait cannot be interrupted).
const waitSlice = 20 * time.Millisecond

func (e *pJFCE) Wait(ctx context.Context, out []any) (int, error) {
	for {
		timeout := waitSlice
		if d, ok := ctx.Deadline(); ok {
			timeout = min(timeout, max(0, time.Until(d)))
		}
		if ctx.Err() != nil {
			timeout = 0 // a check of what is there
		}
		r, err := rpcWait.call(e.p.c, &waitArgs{H: e.h, Timeout: timeout, N: len(out)})
		for i, id := range r.Owners {
			if i < len(out) {
				out[i] = e.p.owner(id)
			}
		}
		if r.N > 0 || !errors.Is(err, provider.ErrTimeout) {
			return r.N, err
		}
		if err := provider.ContextErr(ctx); err != nil {
			return 0, err
		}
	}
}

func (e *pJFCE) Close() error {
	_, err := e.close()
	return err
}

// pJFC is the proxy of a completion queue.
type pJFC struct {
	obj
	depth int
	owner uint64
}

func (j *pJFC) Poll(crs []provider.CR) (int, error) {
	r, err := rpcPoll.call(j.p.c, &countArgs{H: j.h, N: len(crs)})
	copy(crs, r.CRs)
	return r.N, err
}

func (j *pJFC) Rearm(solicitedOnly bool) error {
	_, err := rpcRearm.call(j.p.c, &rearmArgs{H: j.h, SolicitedOnly: solicitedOnly})
	return err
}

func (j *pJFC) Ack(n int) error {
	_, err := rpcAck.call(j.p.c, &countArgs{H: j.h, N: n})
	return err
}

func (j *pJFC) Modify(count int, period time.Duration) error {
	_, err := rpcModifyJFC.call(j.p.c, &modifyJFCArgs{H: j.h, Count: count, Period: period})
	return err
}

// Depth is the depth the peer's JFC reported at creation; it never changes.
func (j *pJFC) Depth() int { return j.depth }

func (j *pJFC) Close() error {
	_, err := j.close(j.owner)
	return err
}
