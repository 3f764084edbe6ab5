package remote

import (
	"github.com/urma-go/sdk/provider"
)

// Work requests name segments and remotes by object; on the wire they name
// them by handle, or by descriptor when they are not this peer's.

func (p *Peer) wireWR(w *provider.WR) (wr, error) {
	dst := w.Dest()
	if _, ok := dst.(provider.GroupRemote); ok {
		// A jetty group's member is picked here, as a provider picks it.
		m, err := provider.PickMember(dst, w.Hint)
		if err != nil {
			return wr{}, err
		}
		dst = m
	}
	t, err := p.remoteRef(dst)
	if err != nil {
		return wr{}, err
	}
	local, err := p.wireSGEs(w.Local)
	if err != nil {
		return wr{}, err
	}
	rm, err := p.wireSGE(w.Remote)
	if err != nil {
		return wr{}, err
	}
	out := wr{Opcode: w.Opcode, Flags: w.Flags, UserCtx: w.UserCtx, Target: t, Local: local, Remote: rm,
		Inline: w.Inline, Imm: w.Imm, Compare: w.Compare, Operand: w.Operand}
	if out.Notify, err = p.wireSGE(w.Notify); err != nil {
		return wr{}, err
	}
	if out.Invalidate, err = p.wireSGE(provider.SGE{Seg: w.Invalidated()}); err != nil {
		return wr{}, err
	}
	return out, nil
}

func (p *Peer) wireSGEs(in []provider.SGE) ([]sge, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]sge, len(in))
	for i := range in {
		var err error
		if out[i], err = p.wireSGE(in[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p *Peer) wireSGE(g provider.SGE) (w sge, err error) {
	// A wrapper or foreign object can be a typed nil that panics when asked
	// for its descriptor; that is a bad request, not a crash.
	defer catch(&err, "segment in a scatter/gather element")
	m := g.Seg
	w = sge{Seg: p.handleOf(m), Addr: g.Addr, Len: g.Len}
	if w.Seg == foreignHandle {
		w.Foreign = segDesc(m.Desc())
	}
	return w, nil
}

func (p *Peer) remoteRef(r provider.Remote) (ref remoteRef, err error) {
	defer catch(&err, "remote")
	ref.H = p.handleOf(r)
	if ref.H == foreignHandle {
		ref.Foreign = jettyDesc(r.Desc())
	}
	return ref, nil
}

func catch(err *error, what string) {
	if r := recover(); r != nil {
		*err = provider.Errorf(provider.ErrInvalid, "unusable %s: %v", what, r)
	}
}

// postUpTo posts the requests before the first bad one (one this side could
// not translate), then reports that one as not queued: what Post does for
// the first request it refuses.
func postUpTo[T any](wrs []T, bad int, badErr error, post func([]T) (int, error)) (int, error) {
	if bad == len(wrs) {
		return post(wrs)
	}
	if bad > 0 {
		if n, err := post(wrs[:bad]); err != nil {
			return n, err
		}
	}
	return bad, badErr
}
