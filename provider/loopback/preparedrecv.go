package loopback

import (
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider"
)

// preparedRecv is a list of receive requests checked once (jetty.PreparedRecv):
// each slot's words are worked out at PrepareRecv, and a Post copies them
// into the ring. A post of receives through PostRecv spends most of its
// instructions finding each SGE's segment behind its interface and
// checking the range, work a server that reposts the same receives over
// and over need not repeat (BenchmarkSendStream8PreparedRecv against
// BenchmarkSendStream8).
type preparedRecv struct {
	q *recvq
	// closed is the owner's flag when it is not the queue's own (a
	// Jetty's), nil for a JFR.
	closed *atomic.Bool
	images []recvImage
	sges   []recvSGE
	// segs are the segments the SGEs name, each once: a post refuses a
	// list whose memory was unregistered, as PostRecv does.
	segs []*segment
}

// recvImage is a receive's slot as it will be written: its user context
// and its SGEs, sges[first:first+n] of the list's.
type recvImage struct {
	userCtx  uint64
	first, n uint32
}

func (q *recvq) prepareRecv(closed *atomic.Bool, wrs []provider.RecvWR) (provider.PreparedRecv, int, error) {
	if q.closed.Load() || closed != nil && closed.Load() {
		return nil, 0, errClosed("jfr")
	}
	p := &preparedRecv{q: q, closed: closed, images: make([]recvImage, len(wrs))}
	for i := range wrs {
		w := &wrs[i]
		if err := q.checkRecv(w); err != nil {
			return nil, i, err
		}
		p.images[i] = recvImage{userCtx: w.UserCtx, first: uint32(len(p.sges)), n: uint32(len(w.Local))}
		for k := range w.Local {
			s := asSegment(w.Local[k].Seg)
			p.sges = append(p.sges, recvSGE{addr: w.Local[k].Addr, length: w.Local[k].Len, handle: s.handle, gen: s.ref.gen})
			p.addSeg(s)
		}
	}
	return p, 0, nil
}

// addSeg adds s to the segments the list names, once.
func (p *preparedRecv) addSeg(s *segment) {
	for _, t := range p.segs {
		if t == s {
			return
		}
	}
	p.segs = append(p.segs, s)
}

func (p *preparedRecv) Len() int { return len(p.images) }

func (p *preparedRecv) Post(n int) (int, error) {
	if n < 0 || n > len(p.images) {
		return 0, provider.Errorf(provider.ErrInvalid, "post of %d receives of a prepared list of %d", n, len(p.images))
	}
	if p.closed != nil && p.closed.Load() {
		return 0, errClosed("jetty")
	}
	q := p.q
	if err := q.beginPosts(); err != nil {
		return 0, err
	}
	// A segment unregistered since PrepareRecv refuses the whole post,
	// where PostRecv would have posted the receives before its first
	// use: the list is one unit to its caller.
	for _, s := range p.segs {
		if s.closed.Load() {
			q.posting.leave()
			return 0, errClosed("local segment")
		}
	}
	done := 0
	var err error
	for done < n {
		pos, got, ferr := q.reserveRecvs(n - done)
		if ferr != nil {
			err = ferr
			break
		}
		for k := range got {
			p.write(pos+uint64(k), &p.images[done+k])
		}
		done += got
	}
	q.endPosts()
	return done, err
}

// write fills the reserved slot pos with the receive im and publishes it.
// It copies whole words: the image was written long before, so unlike
// writeRecv's fields, its loads do not wait on recent narrow stores.
func (p *preparedRecv) write(pos uint64, im *recvImage) {
	r := p.q.ring
	at := r.Payload(pos)
	*(*recvSlot)(at) = recvSlot{userCtx: im.userCtx, nsge: im.n}
	dst := (*recvSGE)(unsafe.Add(at, unsafe.Sizeof(recvSlot{})))
	switch im.n {
	case 0:
	case 1:
		*dst = p.sges[im.first]
	default:
		copy(unsafe.Slice(dst, im.n), p.sges[im.first:im.first+im.n])
	}
	r.Publish(pos)
}

func (j *jfrObj) PrepareRecv(wrs []provider.RecvWR) (provider.PreparedRecv, int, error) {
	return j.prepareRecv(nil, wrs)
}

func (j *jettyObj) PrepareRecv(wrs []provider.RecvWR) (provider.PreparedRecv, int, error) {
	return j.rq.prepareRecv(&j.closed, wrs)
}
