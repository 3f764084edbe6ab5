package loopback

import (
	"unsafe"

	"github.com/urma-go/sdk/provider"
)

// postMemo is the last single request a queue's Post ran through the full
// checks, kept as a prepared request (see prepared). A Post of one request
// of the same shape (the same opcode and flags but Signaled, target, local
// range or inline length, and remote range) posts it the way a prepared
// request is posted: only what can change between posts is checked again
// (states, closed flags, the queue's room), which is what makes the loop a
// user writes with Post as fast as one that prepares its requests. The
// fields that a prepared request lets change between posts (the user
// context, immediate data and atomic operands), the Signaled flag and the
// inline bytes are taken from each request.
//
// A memo is the queue's, under its lock. It keeps no reference to a
// caller's slices between posts: the inline bytes it borrows for a post are
// dropped when the post returns.
type postMemo struct {
	p     prepared
	valid bool
	// The shape: what the request's checks and lookups depend on. The
	// interfaces (target, segments) are compared by their two words: the
	// same words are the same dynamic type and the same object, and no
	// comparison of values (which panics on a type without ==) is made.
	op           provider.Opcode
	flags        provider.WRFlags // without FlagSignaled
	ref          *provider.RemoteRef
	target       ifaceWords // what ref held
	lseg, rseg   ifaceWords // lseg zero for inline data
	laddr, raddr uint64
	llen, rlen   uint32
	inlineLen    int
}

// ifaceWords are the two words of an interface value: its type and its
// data.
type ifaceWords [2]unsafe.Pointer

// wordsOf returns the words of the interface *p, which must point to an
// interface value.
func wordsOf[T any](p *T) ifaceWords { return *(*ifaceWords)(unsafe.Pointer(p)) }

// same tells whether the interface *p has the words a; word by word, where
// == on the arrays would call the runtime's memory comparison.
func same[T any](p *T, a *ifaceWords) bool {
	b := (*ifaceWords)(unsafe.Pointer(p))
	return b[0] == a[0] && b[1] == a[1]
}

// shapeFlags are the flags a memo's shape includes.
const shapeFlags = ^provider.FlagSignaled

// fits tells whether w has the memo's shape.
func (m *postMemo) fits(w *provider.WR) bool {
	if !m.valid || w.Opcode != m.op || w.Flags&shapeFlags != m.flags || w.Target != m.ref ||
		!same(&w.Remote.Seg, &m.rseg) || w.Remote.Addr != m.raddr || w.Remote.Len != m.rlen {
		return false
	}
	if m.ref != nil && !same(&m.ref.Remote, &m.target) {
		return false
	}
	if m.inlineLen != 0 {
		return len(w.Local) == 0 && len(w.Inline) == m.inlineLen
	}
	if len(w.Local) != 1 {
		return false
	}
	l := &w.Local[0]
	return same(&l.Seg, &m.lseg) && l.Addr == m.laddr && l.Len == m.llen
}

// post runs w, which fits the memo, as the memo's prepared request; the
// caller holds the queue's lock.
func (m *postMemo) post(w *provider.WR) (int, error) {
	p := &m.p
	if len(p.remote) > 0 {
		// Asked for before the checks, as a prepared request's Post
		// asks (see there): the line the peer polls then moves while
		// they run.
		p.prefetchRemote()
	}
	k := &p.wr[0]
	k.Flags, k.UserCtx, k.Imm, k.Compare, k.Operand = w.Flags, w.UserCtx, w.Imm, w.Compare, w.Operand
	if m.inlineLen > 0 {
		k.Inline, p.local = w.Inline, w.Inline
		n, err := p.postLocked()
		k.Inline, p.local = nil, nil
		return n, err
	}
	return p.postLocked()
}

// learn makes w, which the queue's Post has just run through the full
// checks, the memo, when it is a request a prepared request would post
// its short way; otherwise the memo is left empty. Under the queue's lock.
func (q *sendq) learn(w *provider.WR) {
	m := &q.memo
	m.valid = false
	// fits compares neither Notify nor Invalidate: requests that use
	// them are never kept.
	if w.Opcode == provider.OpNOP || extOpcode(w.Opcode) || len(w.Local) > 1 || len(w.Local) == 1 && w.Flags&provider.FlagInline != 0 {
		return
	}
	if t := w.Dest(); t != nil && asRemote(t) == nil {
		return // a jetty group's requests each pick their member
	}
	rem, err := q.target(w)
	if err != nil {
		return
	}
	p := &m.p
	*p = prepared{q: q, rem: rem}
	k := &p.wr[0]
	*k = *w
	k.Local = p.sge[:copy(p.sge[:], w.Local)]
	if !p.resolve() {
		*p = prepared{}
		return
	}
	if len(w.Inline) > 0 {
		// The caller's bytes: each post borrows its own.
		k.Inline, p.local = nil, nil
	}
	p.fast = true
	m.valid = true
	m.op, m.flags, m.ref, m.target = w.Opcode, w.Flags&shapeFlags, w.Target, ifaceWords{}
	if w.Target != nil {
		m.target = wordsOf(&w.Target.Remote)
	}
	m.rseg, m.raddr, m.rlen = wordsOf(&w.Remote.Seg), w.Remote.Addr, w.Remote.Len
	m.lseg, m.laddr, m.llen, m.inlineLen = ifaceWords{}, 0, 0, 0
	if p.seg == nil {
		m.inlineLen = len(w.Inline)
	} else {
		m.lseg, m.laddr, m.llen = wordsOf(&w.Local[0].Seg), w.Local[0].Addr, w.Local[0].Len
	}
}

// forget empties the memo, so that it holds nothing of the queue's peers
// or memory once the queue is closed.
func (m *postMemo) forget() { *m = postMemo{} }
