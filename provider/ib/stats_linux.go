//go:build cgo && urma_verbs

package ib

import (
	"slices"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/sysfs"
)

// Counters. Every verbs call of the data path goes through Go, which
// counts under the lock the call already holds: a send queue's mu for its
// posts, a JFR's for its receives, a JFC's for its polls. The device
// retries RNR itself, unseen: the port's hw_counters count those retries.

// sendStats are a send queue's counters, under its mu.
type sendStats struct {
	posted, bytes, postErrors, flushed uint64
}

// countPost counts a post under q.mu: wrs are the requests it accepted,
// err why it refused the next.
func (q *sendq) countPost(wrs []provider.WR, err error) {
	q.stats.posted += uint64(len(wrs))
	for i := range wrs {
		q.stats.bytes += wrs[i].DataLen()
	}
	if err != nil {
		q.stats.postErrors++
	}
}

func (q *sendq) counters() provider.QueueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return provider.QueueStats{Posted: q.stats.posted, Bytes: q.stats.bytes, PostErrors: q.stats.postErrors,
		Flushed: q.stats.flushed}
}

// Stats implements provider.StatsQueue.
func (q *sendq) Stats() (provider.QueueStats, error) {
	if q.closed.Load() {
		return provider.QueueStats{}, errClosed("jfs")
	}
	return q.counters(), nil
}

func (j *jfr) counters() provider.QueueStats {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stats
}

// Stats implements provider.StatsQueue.
func (j *jfr) Stats() (provider.QueueStats, error) {
	if j.closed.Load() {
		return provider.QueueStats{}, errClosed("jfr")
	}
	return j.counters(), nil
}

func (j *jetty) counters() provider.QueueStats {
	s := j.sq.counters()
	if !j.sharedRQ {
		r := j.rq.counters()
		s.RecvPosted, s.PostErrors = r.RecvPosted, s.PostErrors+r.PostErrors
	}
	return s
}

// Stats implements provider.StatsQueue: the send side's counters, and the
// receives of the Jetty's own receive queue.
func (j *jetty) Stats() (provider.QueueStats, error) {
	if j.closed.Load() {
		return provider.QueueStats{}, errClosed("jetty")
	}
	return j.counters(), nil
}

// count counts the records crs a poll returns, under j.mu.
func (j *jfc) count(crs []provider.CR) {
	j.stats.Completions += uint64(len(crs))
	for i := range crs {
		if st := crs[i].Status; st != provider.CRSuccess {
			j.stats.Errors[provider.StatusSlot(st)]++
		}
	}
}

func (j *jfc) counters() provider.QueueStats {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stats
}

// Stats implements provider.StatsQueue.
func (j *jfc) Stats() (provider.QueueStats, error) {
	if j.closed.Load() {
		return provider.QueueStats{}, errClosed("jfc")
	}
	return j.counters(), nil
}

// countersOf is the counters of a queue or JFC the context tracks; ok is
// false for other objects. A Jetty's queues are not tracked on their own.
func countersOf(o child) (s provider.QueueStats, ok bool) {
	switch x := o.(type) {
	case *sendq:
		return x.counters(), true
	case *jfr:
		return x.counters(), true
	case *jetty:
		return x.counters(), true
	case *jfc:
		return x.counters(), true
	}
	return s, false
}

// Stats implements provider.StatsContext.
func (c *ibContext) Stats() (provider.ContextStats, error) {
	if c.closed.Load() {
		return provider.ContextStats{}, errClosed("context")
	}
	c.mu.Lock()
	kids := slices.Collect(c.objects.All())
	retired := c.retired
	c.mu.Unlock()
	var cs provider.ContextStats
	for _, k := range kids {
		s, ok := countersOf(k)
		if !ok {
			continue
		}
		switch k.(type) {
		case *sendq:
			cs.JFS++
		case *jfr:
			cs.JFR++
		case *jetty:
			cs.Jetty++
		case *jfc:
			cs.JFC++
		}
		cs.Total.Add(&s)
	}
	cs.Total.Add(&retired)
	return cs, nil
}

// PortCounters implements provider.StatsDevice: the port's counters and
// hw_counters from sysfs.
func (d *device) PortCounters(port int) (provider.PortCounters, error) {
	return sysfs.PortCounters("", d.info.Name, port)
}

var (
	_ provider.StatsQueue   = (*sendq)(nil)
	_ provider.StatsQueue   = (*jfr)(nil)
	_ provider.StatsQueue   = (*jetty)(nil)
	_ provider.StatsQueue   = (*jfc)(nil)
	_ provider.StatsContext = (*ibContext)(nil)
	_ provider.StatsDevice  = (*device)(nil)
)
