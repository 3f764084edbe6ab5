package loopback

import (
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/rules"
	"github.com/urma-go/sdk/provider/internal/wrcheck"
)

// validate applies the post-time checks of docs/semantics.md and resolves
// the request's target.
func (q *sendq) validate(w *provider.WR) (*remote, error) {
	if err := wrcheck.Opcode(w, &q.limits); err != nil {
		return nil, err
	}
	op := w.Opcode
	if op == provider.OpNOP {
		return nil, nil
	}
	rem, err := q.target(w)
	if err != nil {
		return nil, err
	}
	if err := wrcheck.Shape(w, &q.limits); err != nil {
		return nil, err
	}
	if !w.InlineBytes() {
		for i := range w.Local {
			if _, err := q.ctx.localSeg(w.Local[i].Seg); err != nil {
				return nil, err
			}
		}
	}
	if op.IsOneSided() {
		t := asTarget(w.Remote.Seg)
		if t == nil || t.ctx != q.ctx {
			return nil, provider.Errorf(provider.ErrInvalid, "%v needs a target segment imported into this context in Remote", op)
		}
		if t.closed.Load() {
			return nil, errClosed("target segment")
		}
		if op.IsAtomic() && t.ref.mem == nil {
			return nil, provider.Errorf(provider.ErrNotSupported,
				"%v on registered caller memory of another process: the loopback provider reaches it only by copying; allocate the target with segment.Alloc for atomics", op)
		}
	}
	if op == provider.OpWriteNotify || op == provider.OpSendInvalidate {
		if err := q.validateExt(w, rem); err != nil {
			return nil, err
		}
	}
	return rem, nil
}

// target resolves where a request goes, by transport mode.
func (q *sendq) target(w *provider.WR) (*remote, error) {
	t := w.Dest()
	if q.mode == provider.RC {
		b := q.jetty.bound
		if b == nil {
			return nil, rules.NotBound()
		}
		if t != nil && asRemote(t) != b {
			return nil, rules.BoundElsewhere(b.desc.ID)
		}
		if b.closed.Load() {
			return nil, errClosed("bound remote jetty")
		}
		return b, nil
	}
	if t == nil {
		return nil, rules.NoTarget(w.Opcode, q.mode)
	}
	// The remote of the last request, checked then, needs only its
	// closed flag checked again.
	if r := asRemote(t); r != nil && r == q.lastRemote && !r.closed.Load() {
		return r, nil
	}
	if asRemote(t) == nil {
		// A jetty group: the request goes to the member its policy picks.
		m, err := provider.PickMember(t, w.Hint)
		if err != nil {
			return nil, err
		}
		t = m
	}
	r, err := q.ctx.ownRemote(t)
	if err != nil {
		return nil, err
	}
	if r.desc.Mode != q.mode {
		return nil, rules.ModeMismatch(r.desc.Mode, q.mode)
	}
	q.lastRemote = r
	return r, nil
}
