package jetty

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/internal/viewio"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Requests whose local SGEs name a view.View run through the view's
// software path: Post swaps each such SGE for the view's bounce segment
// (gathering and signing the data first when the view is the source), and
// the JFC that receives the record finishes the transfer (checking and
// scattering the data when the view is the destination) before Poll or
// Flush hands the record over. To find those records the request carries
// a token of the JFC's in place of its user context; Poll puts the
// caller's context back. A request through a view is always signaled
// underneath; the record of an unsignaled one that succeeded is dropped.

// viewOps is a JFC's table of requests in flight through views.
type viewOps struct {
	live atomic.Int32 // len(ops), read without mu on every Poll
	mu   sync.Mutex
	ops  map[uint64]*viewOp
	next uint64 // the next token; starts at a random value
}

// viewOp is one request through views.
type viewOp struct {
	userCtx  uint64
	signaled bool
	parts    []viewPart
}

// viewPart is one view SGE of the request: its engine and where its data
// starts in the request's wire stream.
type viewPart struct {
	eng   *viewio.Engine
	start uint64
	n     uint64
}

// add registers op and returns its token.
func (v *viewOps) add(op *viewOp) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ops == nil {
		v.ops = make(map[uint64]*viewOp)
		v.next = rand.Uint64()
	}
	for {
		v.next++
		if _, taken := v.ops[v.next]; !taken {
			break
		}
	}
	v.ops[v.next] = op
	v.live.Add(1)
	return v.next
}

// drop unregisters the op of token and aborts its transfers: the request
// was never posted.
func (v *viewOps) drop(token uint64) {
	v.mu.Lock()
	op := v.ops[token]
	delete(v.ops, token)
	v.live.Add(-1)
	v.mu.Unlock()
	for _, p := range op.parts {
		p.eng.Abort()
	}
}

// finish completes the records of requests through views in crs, in place,
// and returns how many records remain (those of unsignaled requests that
// succeeded are dropped).
func (v *viewOps) finish(crs []provider.CR) int {
	// Small enough to be inlined into every poll, which then pays a load
	// for the views when none is in flight.
	if v.live.Load() == 0 {
		return len(crs)
	}
	return v.finishViews(crs)
}

// finishViews is finish when requests through views are in flight.
func (v *viewOps) finishViews(crs []provider.CR) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := 0
	for i := range crs {
		cr := crs[i]
		if op, ok := v.ops[cr.UserCtx]; ok {
			delete(v.ops, cr.UserCtx)
			v.live.Add(-1)
			cr.UserCtx = op.userCtx
			st := cr.Status
			for _, p := range op.parts {
				// Bytes of this view's range that arrived (receive, READ).
				moved := min(max(uint64(cr.Len), p.start)-p.start, p.n)
				if s := p.eng.End(uint32(moved), cr.Status); st == provider.CRSuccess {
					st = s
				}
			}
			cr.Status = st
			if !op.signaled && st == provider.CRSuccess {
				continue
			}
		}
		crs[k] = cr
		k++
	}
	return k
}

// usesViews reports whether a request names a view.
func usesViews(wrs []provider.WR) bool {
	for i := range wrs {
		if _, ok := wrs[i].Remote.Seg.(*viewio.Engine); ok {
			return true
		}
		if hasView(wrs[i].Local) {
			return true
		}
	}
	return false
}

func hasView(sges []provider.SGE) bool {
	for j := range sges {
		if _, ok := sges[j].Seg.(*viewio.Engine); ok {
			return true
		}
	}
	return false
}

// pending is a request of a batch that registered a view op.
type pending struct {
	index int
	token uint64
}

// dropUnposted drops the ops of the batch's requests from index n on: the
// provider did not queue them.
func (v *viewOps) dropUnposted(ps []pending, n int) {
	for _, p := range ps {
		if p.index >= n {
			v.drop(p.token)
		}
	}
}

// post queues wrs, through their views when they name any.
func (s *sender) post(wrs []provider.WR) (int, error) {
	if !viewio.Made() || !usesViews(wrs) {
		return s.p.Post(wrs)
	}
	return s.postViews(wrs)
}

// postViews is post of requests of which some name a view.
func (s *sender) postViews(wrs []provider.WR) (int, error) {
	ws := make([]provider.WR, len(wrs))
	var ps []pending
	var prepErr error
	i := 0
	for ; i < len(wrs); i++ {
		ws[i] = wrs[i]
		tok, ok, err := s.prepare(&ws[i])
		if err != nil {
			prepErr = err
			break
		}
		if ok {
			ps = append(ps, pending{i, tok})
		}
	}
	n, err := s.p.Post(ws[:i])
	s.jfc.views.dropUnposted(ps, n)
	if err != nil {
		return n, err
	}
	return n, prepErr
}

// prepare runs w's view SGEs through their views, in place, and returns
// the token it registered if w uses any.
func (s *sender) prepare(w *provider.WR) (uint64, bool, error) {
	if _, ok := w.Remote.Seg.(*viewio.Engine); ok {
		return 0, false, provider.Errorf(urma.ErrInvalid, "a view is local memory: peers reach it through View.Expose's descriptor")
	}
	if !hasView(w.Local) || w.Flags&provider.FlagInline != 0 {
		return 0, false, nil
	}
	var dir viewio.Dir
	switch {
	case w.Opcode == provider.OpRead:
		dir = viewio.IntoView
	case w.Opcode.IsAtomic():
		return 0, false, provider.Errorf(urma.ErrInvalid, "%v does not run through a view", w.Opcode)
	default:
		dir = viewio.FromView
	}
	op := &viewOp{userCtx: w.UserCtx, signaled: w.Flags&provider.FlagSignaled != 0}
	local, err := begin(op, w.Local, dir)
	if err != nil {
		return 0, false, err
	}
	w.Local = local
	w.UserCtx = s.jfc.views.add(op)
	w.Flags |= provider.FlagSignaled
	return w.UserCtx, true, nil
}

// begin starts op's transfers for the view SGEs of sges and returns the
// SGE list the provider moves.
func begin(op *viewOp, sges []provider.SGE, dir viewio.Dir) ([]provider.SGE, error) {
	out := make([]provider.SGE, len(sges))
	var at uint64
	for j, sg := range sges {
		out[j] = sg
		if e, ok := sg.Seg.(*viewio.Engine); ok {
			b, err := e.Begin(sg, dir)
			if err != nil {
				for _, p := range op.parts {
					p.eng.Abort()
				}
				return nil, err
			}
			out[j] = b
			op.parts = append(op.parts, viewPart{eng: e, start: at, n: uint64(b.Len)})
		}
		at += uint64(out[j].Len)
	}
	return out, nil
}

// recvsUseViews tells whether any of the receives names a view.
func recvsUseViews(wrs []provider.RecvWR) bool {
	for i := range wrs {
		if hasView(wrs[i].Local) {
			return true
		}
	}
	return false
}

// postAll queues receives, through their views when they name any.
func (r *receiver) postAll(wrs []provider.RecvWR) (int, error) {
	if !viewio.Made() || !recvsUseViews(wrs) {
		return r.post(wrs)
	}
	return r.postViews(wrs)
}

// postViews is postAll of receives of which some name a view.
func (r *receiver) postViews(wrs []provider.RecvWR) (int, error) {
	ws := make([]provider.RecvWR, len(wrs))
	var ps []pending
	var prepErr error
	i := 0
	for ; i < len(wrs); i++ {
		ws[i] = wrs[i]
		if !hasView(ws[i].Local) {
			continue
		}
		op := &viewOp{userCtx: ws[i].UserCtx, signaled: true}
		local, err := begin(op, ws[i].Local, viewio.IntoView)
		if err != nil {
			prepErr = err
			break
		}
		ws[i].Local = local
		ws[i].UserCtx = r.jfc.views.add(op)
		ps = append(ps, pending{i, ws[i].UserCtx})
	}
	n, err := r.post(ws[:i])
	r.jfc.views.dropUnposted(ps, n)
	if err != nil {
		return n, err
	}
	return n, prepErr
}
