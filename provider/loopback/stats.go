package loopback

import (
	"slices"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/shm"
)

// Counters. They are always on, so each is kept where the path that
// changes it already is, at the cost of an add:
//   - a send queue's requests are its head (the sequence of the last one
//     accepted); their bytes, its refused posts and its RNR retries are
//     fields written under the queue's lock, which its Stats takes too;
//   - a receive queue's receives are its ring's enqueue position; its
//     refused posts, an error path, an atomic add;
//   - a JFC's records are counted once per poll that returns some (a
//     plain store for a lock-free JFC, which has one poller at a time, an
//     atomic add otherwise), and the error records one by one, off the
//     path of successes.

// sendStats are a send queue's counters beyond head, guarded by its lock.
type sendStats struct {
	bytes, postErrors, rnrRetries, flushed uint64
}

// countPost counts a post under the queue's lock: wrs are the requests
// it accepted, err why it refused the next.
func (q *sendq) countPost(wrs []provider.WR, err error) {
	for i := range wrs {
		q.stats.bytes += wrs[i].DataLen()
	}
	if err != nil {
		q.stats.postErrors++
	}
}

// countOne is countPost for a prepared request (or the memo's) of
// dataLen bytes, its length found when it was prepared: n is 0 or 1.
func (q *sendq) countOne(n int, err error, dataLen int) {
	q.stats.bytes += uint64(n) * uint64(dataLen)
	if err != nil {
		q.stats.postErrors++
	}
}

// statsLocked is the queue's send counters, under its lock.
func (q *sendq) statsLocked() provider.QueueStats {
	return provider.QueueStats{Posted: q.head, Bytes: q.stats.bytes, PostErrors: q.stats.postErrors,
		RNRRetries: q.stats.rnrRetries, Flushed: q.stats.flushed}
}

func (q *sendq) sendStats() (provider.QueueStats, error) {
	if q.closed.Load() {
		return provider.QueueStats{}, errClosed(q.name())
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.statsLocked(), nil
}

// statsOpen is the queue's receive counters; the ring must be mapped.
func (q *recvq) statsOpen() provider.QueueStats {
	return provider.QueueStats{RecvPosted: atomic.LoadUint64(q.ring.EnqPos()), PostErrors: q.postErrors.Load()}
}

func (q *recvq) recvStats() (provider.QueueStats, error) {
	// Inside a post's count, as a post is: destroy waits for it to end
	// before it unmaps the ring.
	if !q.posting.enter(&q.closed) {
		return provider.QueueStats{}, errClosed("jfr")
	}
	defer q.posting.leave()
	return q.statsOpen(), nil
}

// countPolled counts n records returned by a poll.
func (j *jfc) countPolled(n int) {
	if j.alone {
		shm.StoreRelease(&j.polled, atomic.LoadUint64(&j.polled)+uint64(n))
		return
	}
	atomic.AddUint64(&j.polled, uint64(n))
}

// countError counts a record of error status st.
func (j *jfc) countError(st provider.CRStatus) { j.errs[provider.StatusSlot(st)].Add(1) }

// countErrors counts the error records of crs.
func (j *jfc) countErrors(crs []provider.CR) {
	for i := range crs {
		if crs[i].Status != provider.CRSuccess {
			j.countError(crs[i].Status)
		}
	}
}

func (j *jfc) stats() provider.QueueStats {
	s := provider.QueueStats{Completions: atomic.LoadUint64(&j.polled)}
	for i := range j.errs {
		s.Errors[i] = j.errs[i].Load()
	}
	return s
}

// Stats implements provider.StatsQueue: the records polled.
func (j *jfc) Stats() (provider.QueueStats, error) {
	if j.closed.Load() {
		return provider.QueueStats{}, errClosed("jfc")
	}
	return j.stats(), nil
}

// Stats implements provider.StatsQueue: the send counters.
func (j *jfsObj) Stats() (provider.QueueStats, error) { return j.sendStats() }

// Stats implements provider.StatsQueue: the receive counters.
func (j *jfrObj) Stats() (provider.QueueStats, error) { return j.recvStats() }

// Stats implements provider.StatsQueue: the send counters, and the
// receive counters of the Jetty's own receive queue (a shared JFR has
// its own Stats).
func (j *jettyObj) Stats() (provider.QueueStats, error) {
	s, err := j.sendStats()
	if err != nil || j.shared != nil {
		return s, err
	}
	r, err := j.rq.recvStats()
	if err != nil {
		return provider.QueueStats{}, err
	}
	s.RecvPosted, s.PostErrors = r.RecvPosted, s.PostErrors+r.PostErrors
	return s, nil
}

// retire keeps the counters of a queue or JFC that closes in the
// context's totals.
func (c *lbContext) retire(s provider.QueueStats) {
	c.statsMu.Lock()
	c.retired.Add(&s)
	c.statsMu.Unlock()
}

// Stats implements provider.StatsContext.
func (c *lbContext) Stats() (provider.ContextStats, error) {
	if c.closed.Load() {
		return provider.ContextStats{}, errClosed("context")
	}
	var cs provider.ContextStats
	// The live objects first: one that closes meanwhile may then be
	// counted twice, never missed.
	c.mu.Lock()
	kids := slices.Collect(c.children.All())
	c.mu.Unlock()
	for _, k := range kids {
		var s provider.QueueStats
		var err error
		switch o := k.(type) {
		case *jfsObj:
			cs.JFS++
			s, err = o.Stats()
		case *jfrObj:
			cs.JFR++
			s, err = o.Stats()
		case *jettyObj:
			cs.Jetty++
			s, err = o.Stats()
		case *jfc:
			cs.JFC++
			s, err = o.Stats()
		default:
			continue
		}
		if err == nil {
			cs.Total.Add(&s)
		}
	}
	c.statsMu.Lock()
	cs.Total.Add(&c.retired)
	c.statsMu.Unlock()
	return cs, nil
}

var (
	_ provider.StatsQueue   = (*jfsObj)(nil)
	_ provider.StatsQueue   = (*jfrObj)(nil)
	_ provider.StatsQueue   = (*jettyObj)(nil)
	_ provider.StatsQueue   = (*jfc)(nil)
	_ provider.StatsContext = (*lbContext)(nil)
)
