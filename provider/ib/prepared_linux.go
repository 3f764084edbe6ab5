//go:build cgo && urma_verbs

package ib

import (
	"errors"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
)

// fuseSpin is how long one call polls the CQ before it returns to Go
// empty-handed, and so how long a post on the same queue from another
// goroutine may wait for the queue's lock. Each return costs the checks
// and the build of the request again (costly under emulation), and a
// completion that lands meanwhile misses the moment.
const fuseSpin = 20 * time.Microsecond

// prepared is a request checked once (provider.Prepared). Its Post is a
// Post of it; what it adds is PollPost.
type prepared struct {
	q   *sendq
	one [1]provider.WR
}

// Prepare implements provider.Preparer.
func (q *sendq) Prepare(w *provider.WR) (provider.Prepared, error) {
	q.mu.Lock()
	_, _, err := q.validate(w)
	q.mu.Unlock()
	if err != nil {
		return nil, err
	}
	p := &prepared{q: q}
	p.one[0] = *w
	p.one[0].Local = append([]provider.SGE(nil), w.Local...)
	return p, nil
}

// Prepare implements provider.Preparer for the jetty's send side.
func (j *jetty) Prepare(w *provider.WR) (provider.Prepared, error) { return j.sq.Prepare(w) }

// WR implements provider.Prepared.
func (p *prepared) WR() *provider.WR { return &p.one[0] }

// Post implements provider.Prepared.
func (p *prepared) Post() (int, error) { return p.q.Post(p.one[:]) }

// PollPost implements provider.PollPoster. A C call polls the CQ and,
// when every completion it takes succeeded, posts the request before it
// returns. On Soft-RoCE this is what a program must do to post as fast as
// perftest: the kernel hands each post to a worker thread, and a post
// that comes while the worker is still busy with the last completion
// needs no wake-up; one that comes later, after the two cgo crossings of
// a poll and a post from Go, may find it asleep.
func (p *prepared) PollPost(pj provider.JFC, crs []provider.CR) (int, bool, error, error) {
	j, ok := pj.(*jfc)
	if !ok || j.ctx != p.q.ctx || len(crs) == 0 || j.closed.Load() {
		n, err := pj.Poll(crs)
		return n, false, nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if n := j.drainBacklog(crs, 0); n > 0 {
		j.count(crs[:n])
		return n, false, nil, nil
	}
	k, posted, postErr, err := p.q.pollPost(j, p.one[:], min(len(j.wcs), len(crs)))
	if err != nil {
		return 0, false, nil, verbsErr("poll", err)
	}
	// No more polling after a post: the request's own completion could
	// be next.
	n := j.drainBacklog(crs, j.records(crs, 0, k))
	j.count(crs[:n])
	return n, posted, postErr, nil
}

// errNotPosted is pollFuse's refusal when its poll found nothing to post
// after (or a completion that failed): Post gives the slots back as for
// a device's refusal.
var errNotPosted = errors.New("ib: poll found no completions to post after")

// pollFuse runs a batch's post inside a poll of cq (see pollPost), or a
// watch of a flag (see PostOnFlag).
type pollFuse struct {
	on bool
	// need asks the poll for the completion of request needID before it
	// posts: the queue is full, and that request's slot is the one the
	// post takes (see fuseTail).
	need   bool
	needID uint64
	cq     *verbs.CQ
	wcs    []verbs.WC
	// flag, when set, replaces the poll: the post waits for *flag ==
	// want instead of for completions (PostOnFlag).
	flag *byte
	want byte
	used bool
	got  int   // completions the poll took
	err  error // the poll's
}

// post polls, then posts wrs on cn if the poll took completions that all
// succeeded (or, with a flag, watches it and posts once it holds want);
// errNotPosted when it did not.
func (f *pollFuse) post(cn *conn, wrs []verbs.SendWR, sges []verbs.SGE) (int, error) {
	f.used = true
	if f.flag != nil {
		tried, n, err := cn.qp.FlagPost(f.flag, f.want, fuseSpin, wrs, sges)
		if !tried {
			return 0, errNotPosted
		}
		return n, err
	}
	k, tried, n, err := f.cq.PollPost(f.wcs, fuseSpin, f.need, f.needID, cn.qp, wrs, sges)
	f.got = k
	if !tried {
		f.err = err // the poll's, if any
		return 0, errNotPosted
	}
	return n, err
}

// PostOnFlag implements provider.FlagPoster: a C call watches the flag
// and posts the request the moment it holds want, as PollPost does the
// moment completions arrive, and for the same reason. A request that
// would not reach the device is left for the caller's Post.
func (p *prepared) PostOnFlag(flag *byte, want byte) (bool, error) {
	q := p.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.jetty != nil {
		defer q.jetty.dropRetired() // as in Post
	}
	q.fuse = pollFuse{on: true, flag: flag, want: want}
	n, perr := q.postLocked(p.one[:])
	f := q.fuse
	q.fuse = pollFuse{}
	if !f.used || perr == errNotPosted {
		return false, nil
	}
	q.countPost(p.one[:n], perr)
	return true, perr
}

// pollPost posts w as Post does, but hands the device's post to a poll of
// j's CQ into j.wcs[:want], which posts it right after completions only
// (j.mu is held). It returns the completions taken; posted and postErr as
// PollPost. A request that would not reach the device (Post refuses it,
// or completes it itself) is left for the caller's Post, and the CQ is
// polled plainly.
func (q *sendq) pollPost(j *jfc, w []provider.WR, want int) (k int, posted bool, postErr, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.jetty != nil {
		defer q.jetty.dropRetired() // as in Post
	}
	q.fuse = pollFuse{on: true, cq: j.cq, wcs: j.wcs[:want]}
	n, perr := q.postLocked(w)
	f := q.fuse
	q.fuse = pollFuse{}
	switch {
	case !f.used:
		k, err = j.cq.Poll(j.wcs[:want])
		return k, false, nil, err
	case f.err != nil:
		return 0, false, nil, f.err
	case perr == errNotPosted:
		return f.got, false, nil, nil
	}
	q.countPost(w[:n], perr)
	return f.got, true, perr, nil
}

// fuseTail lets a fused post into a full queue take the slot of its
// oldest request, whose completion the poll must then take first. A
// latency loop keeps one request in flight on a queue of depth one, and
// posts the next one the moment the last completes.
func (q *sendq) fuseTail() bool {
	if !q.fuse.on || q.fuse.flag != nil || q.fuse.need || q.head-q.tail != uint64(q.depth) {
		return false
	}
	s := &q.slots[q.tail&q.mask]
	if s.state != slotPosted || !s.signaled || s.cn == nil {
		return false
	}
	q.fuse.need, q.fuse.needID = true, uint64(q.cid)<<32|uint64(uint32(s.seq))
	return true
}
