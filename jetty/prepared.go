package jetty

import (
	"context"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/spin"
)

// Prepared is a work request checked once and posted many times, for loops
// that post the same request over and over (a latency probe, a key-value
// client's GET, a storage target's replies). Prepare checks it as Post
// would; each Post then skips the checks of its shape and the lookups of
// its target and local memory, and only checks what can change between
// posts (the states of the queue and the target, whether the segments are
// still registered). Between posts, only the user context, the immediate
// data and the atomic operands may change (SetUserCtx, SetImm,
// SetAtomic); the bytes in the request's memory are read at each Post, as
// they would be for any request.
//
// A Prepared is not safe for concurrent use; its queue is. It keeps its
// own copy of the request's SGE list, but not of its inline bytes: like the
// memory its SGEs name, they are read at each Post, so that a prepared
// inline request sends what they hold then.
type Prepared struct {
	// w is the request in the provider's form, the provider's copy or own.
	w *provider.WR
	// pub is the request as Prepare took it, for WR.
	pub WR
	// p is the provider's prepared request; nil when the provider has
	// none or the request uses views, and Post then posts own through
	// the sender's post.
	p provider.Prepared
	// pp is p when a poll can post it (PostAfter).
	pp provider.PollPoster
	// fp is p when it can be posted the moment a flag changes (PostWhen).
	fp provider.FlagPoster
	// pace is PostWhen's, one across calls as a JFC's is PollWait's.
	pace spin.Pacer
	s    *sender
	own  [1]provider.WR
}

// Prepare checks wr as Post would and returns it prepared for posting, or
// the error Post would return for it (a *PostError). On a provider that
// cannot check a request without posting it (see provider.Preparer), and
// for requests that use views, Prepare only copies the request, and each
// Post is a Post of it, refusals included.
func (s *sender) Prepare(wr WR) (*Prepared, error) {
	p := &Prepared{s: s, pub: wr}
	p.pub.Local = append([]segment.SGE(nil), wr.Local...)
	var raw provider.WR
	rawWR(&raw, &p.pub)
	if pr, ok := s.p.(provider.Preparer); ok && !usesViews([]provider.WR{raw}) {
		pp, err := pr.Prepare(&raw)
		if err != nil {
			return nil, &PostError{Op: s.kind + " prepare", Err: err}
		}
		p.p, p.w = pp, pp.WR()
		p.pp, _ = pp.(provider.PollPoster)
		p.fp, _ = pp.(provider.FlagPoster)
		return p, nil
	}
	// Without the provider's help the request is kept here and posted
	// whole; its SGE list is copied, as the provider's would be.
	p.own[0] = raw
	p.w = &p.own[0]
	return p, nil
}

// Post queues the request once. On error it returns a *PostError, as the
// queue's Post does.
func (p *Prepared) Post() error {
	var err error
	if p.p != nil {
		_, err = p.p.Post()
	} else {
		_, err = p.s.post(p.own[:])
	}
	if err != nil {
		return p.s.again.of(p.s.kind, "post", 0, err)
	}
	return nil
}

// PostAfter waits for records on j, then posts the request: it is
// j.PollWait(ctx, crs, spinFor) followed by Post, in one call, and returns
// what they return. The records are valid even when the post fails (a
// *PostError); when the wait fails, nothing is posted. The request's own
// record is never among them.
//
// What it changes is when the request leaves. A provider that can (ib)
// posts it from inside the poll that finds the first completions, before
// it turns them into records. In a loop where each request waits for the
// last one's completion (a READ or atomic latency probe, a reply that
// waits for a receive), the next request then leaves the moment the device
// reports the last, which on Soft-RoCE decides the latency (see the ib
// provider's package documentation). Elsewhere it is PollWait and Post.
func (p *Prepared) PostAfter(ctx context.Context, j *JFC, crs []CR, spinFor time.Duration) (int, error) {
	if p.pp == nil {
		n, err := j.PollWait(ctx, crs, spinFor)
		if err != nil {
			return n, err
		}
		return n, p.Post()
	}
	a := postAfter{pp: p.pp}
	n, err := j.pollWait(ctx, crs, spinFor, &a)
	switch {
	case err != nil:
		return n, err
	case !a.posted:
		return n, p.Post()
	case a.err != nil:
		return n, p.s.again.of(p.s.kind, "post", 0, a.err)
	}
	return n, nil
}

// postAfter is a PostAfter in progress: the prepared request and whether
// a poll posted it, with the post's error.
type postAfter struct {
	pp     provider.PollPoster
	posted bool
	err    error
}

// WR returns a copy of the request as the next Post will post it.
func (p *Prepared) WR() WR {
	w := p.pub
	w.UserCtx, w.Imm, w.Compare, w.Operand = p.w.UserCtx, p.w.Imm, p.w.Compare, p.w.Operand
	w.Local = append([]segment.SGE(nil), p.pub.Local...)
	return w
}

// SetUserCtx sets the user context of the requests posted from now on.
func (p *Prepared) SetUserCtx(userCtx uint64) { p.w.UserCtx = userCtx }

// SetImm sets the immediate data of the requests posted from now on
// (SEND_IMM, WRITE_IMM).
func (p *Prepared) SetImm(imm uint64) { p.w.Imm = imm }

// SetAtomic sets the operands of the atomics posted from now on: compare
// and operand (the swap value) for CAS, operand alone for the others.
func (p *Prepared) SetAtomic(compare, operand uint64) {
	p.w.Compare, p.w.Operand = compare, operand
}
