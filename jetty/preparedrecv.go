package jetty

import "github.com/urma-go/sdk/provider"

// PreparedRecv is a list of receive requests checked once and posted many
// times, for a server that reposts the same receives as they complete (a
// SEND bandwidth or RPC server, perftest's receive loop). PrepareRecv
// checks the list as PostRecv would; each Post then skips the checks of
// the SGEs and the lookups of their segments, and only checks what can
// change between posts: the queue's state, and whether the segments are
// still registered. Post(n) posts the list's first n requests, so a loop
// can replace just the receives it consumed.
//
// A PreparedRecv is not safe for concurrent use; its queue is. It keeps
// its own copy of the requests and their SGE lists.
type PreparedRecv struct {
	r *receiver
	// p is the provider's prepared list; nil when the provider has none
	// or the requests use views, and Post then posts own through the
	// queue's PostRecv.
	p   provider.PreparedRecv
	own []provider.RecvWR
}

// PrepareRecv checks wrs as PostRecv would and returns them prepared for
// posting, or the error PostRecv would return for them (a *PostError
// naming the first request refused). On a provider that cannot check
// receives without posting them, and for requests that use views, it only
// copies the list, and each Post is a PostRecv of it, refusals included.
func (r *receiver) PrepareRecv(wrs []RecvWR) (*PreparedRecv, error) {
	p := &PreparedRecv{r: r}
	// The list in the provider's form, with SGE lists of its own.
	raw := make([]provider.RecvWR, len(wrs))
	for i := range wrs {
		raw[i] = provider.RecvWR{UserCtx: wrs[i].UserCtx, Local: append([]provider.SGE(nil), rawSGEs(wrs[i].Local)...)}
	}
	if r.prep != nil && !recvsUseViews(raw) {
		pp, i, err := r.prep.PrepareRecv(raw)
		if err != nil {
			return nil, &PostError{Op: r.kind + " prepare recv", Index: i, Err: err}
		}
		p.p = pp
		return p, nil
	}
	p.own = raw
	return p, nil
}

// Len is the number of requests in the list.
func (p *PreparedRecv) Len() int {
	if p.p != nil {
		return p.p.Len()
	}
	return len(p.own)
}

// Post queues the whole list. On error it returns a *PostError, as
// PostRecv does.
func (p *PreparedRecv) Post() error { return p.PostFirst(p.Len()) }

// PostFirst queues the first n requests of the list, as PostRecv of them
// would; n outside [0, Len()] is refused with ErrInvalid and nothing is
// posted. On error it returns a *PostError, as PostRecv does.
func (p *PreparedRecv) PostFirst(n int) error {
	var done int
	var err error
	switch {
	case n < 0 || n > p.Len():
		err = provider.Errorf(provider.ErrInvalid, "post of %d receives of a prepared list of %d", n, p.Len())
	case p.p != nil:
		done, err = p.p.Post(n)
	default:
		done, err = p.r.postAll(p.own[:n])
	}
	if err != nil {
		return p.r.again.of(p.r.kind, "post prepared recv", done, err)
	}
	return nil
}
