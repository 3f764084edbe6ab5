//go:build cgo && urma_verbs

package ib

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
	"github.com/urma-go/sdk/provider/internal/asyncq"
)

// pollBatch is how many verbs completions one poll call moves.
const pollBatch = 32

// softRecord is a completion made by the provider rather than the device:
// a NOP that had nothing to wait for, or a failure found before the
// request reached a QP. q and seq free the request's slot once polled.
type softRecord struct {
	cr  provider.CR
	q   *sendq
	seq uint64
}

type jfc struct {
	ctx   *ibContext
	cq    *verbs.CQ
	val   uint64
	depth int
	jfce  *jfce
	src   asyncq.Source

	// Lock order: mu (one poller at a time), then a send queue's mu, then
	// bmu, which guards only the backlog so that a queue can add records
	// while it holds its own lock.
	mu      sync.Mutex
	wcs     []verbs.WC
	bmu     sync.Mutex
	backlog []softRecord

	armed    atomic.Int32 // 0, or 1 + solicitedOnly, for software records
	hwEvents atomic.Int32 // channel events delivered by Wait, not acked
	swEvents atomic.Int32 // software wake-ups delivered by Wait, not acked
	users    atomic.Int32
	closed   atomic.Bool

	// stats are the JFC's counters, under mu (see stats_linux.go).
	stats provider.QueueStats
}

func (c *ibContext) NewJFC(cfg provider.JFCConfig) (provider.JFC, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if cfg.Depth <= 0 || cfg.Depth > c.dev.info.Attr.MaxCQE {
		return nil, provider.Errorf(provider.ErrInvalid, "jfc depth %d, device allows 1..%d", cfg.Depth, c.dev.info.Attr.MaxCQE)
	}
	j := &jfc{ctx: c, depth: cfg.Depth, val: nextObjValue(), wcs: make([]verbs.WC, pollBatch)}
	j.src.Owner = cfg.Owner
	if j.src.Owner == nil {
		j.src.Owner = j
	}
	var ch *verbs.CompChannel
	if cfg.JFCE != nil {
		e, ok := cfg.JFCE.(*jfce)
		if !ok || e.ctx != c {
			return nil, provider.Errorf(provider.ErrInvalid, "jfce of another context or provider")
		}
		if e.closed.Load() {
			return nil, errClosed("jfce")
		}
		j.jfce, ch = e, e.ch
	}
	cq, err := c.vc.NewCQ(cfg.Depth, ch, uintptr(j.val))
	if err != nil {
		return nil, verbsErr("ibv_create_cq", err)
	}
	j.cq = cq
	if j.jfce != nil {
		j.jfce.add(j)
	}
	c.hub.watchObj(j.val, func(verbs.AsyncEvent) { c.events.Raise(provider.EventJFCErr, &j.src, 0) })
	c.track(j)
	return j, nil
}

func (j *jfc) Depth() int { return j.depth }
func (j *jfc) rank() int  { return 2 }

// push adds a software record; like a device CQ that overflows, a full
// backlog drops it (false) and raises JFC_ERR.
func (j *jfc) push(r softRecord) bool {
	j.bmu.Lock()
	if len(j.backlog) >= j.depth {
		j.bmu.Unlock()
		j.ctx.events.Raise(provider.EventJFCErr, &j.src, 0)
		return false
	}
	j.backlog = append(j.backlog, r)
	j.bmu.Unlock()
	if mode := j.armed.Load(); mode != 0 {
		wanted := mode == 1 || r.cr.Status != provider.CRSuccess || r.cr.Flags&provider.CRFlagSolicited != 0
		if wanted && j.armed.CompareAndSwap(mode, 0) && j.jfce != nil {
			j.jfce.softNotify(j)
		}
	}
	return true
}

func (j *jfc) Poll(crs []provider.CR) (int, error) {
	if j.closed.Load() {
		return 0, errClosed("jfc")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	n, err := j.pollLocked(crs)
	j.count(crs[:n])
	return n, err
}

func (j *jfc) pollLocked(crs []provider.CR) (int, error) {
	n := 0
	for {
		n = j.drainBacklog(crs, n)
		if n == len(crs) {
			return n, nil
		}
		want := min(len(j.wcs), len(crs)-n)
		k, err := j.cq.Poll(j.wcs[:want])
		if err != nil {
			return n, verbsErr("poll", err)
		}
		n = j.records(crs, n, k)
		if k < want {
			// Completions may have queued records behind held ones.
			return j.drainBacklog(crs, n), nil
		}
	}
}

// records turns the first k completions of wcs into records at crs[n:]
// and returns the new n. Their queues may drop some (see complete).
func (j *jfc) records(crs []provider.CR, n, k int) int {
	for i := 0; i < k; i++ {
		wc := &j.wcs[i]
		q := j.ctx.completer(uint32(wc.ID() >> 32))
		if q != nil && q.complete(wc, &crs[n]) {
			n++
		}
	}
	return n
}

// drainBacklog moves backlog records into crs[n:].
func (j *jfc) drainBacklog(crs []provider.CR, n int) int {
	for n < len(crs) {
		j.bmu.Lock()
		if len(j.backlog) == 0 {
			j.backlog = j.backlog[:0:cap(j.backlog)]
			j.bmu.Unlock()
			break
		}
		r := j.backlog[0]
		j.backlog = j.backlog[1:]
		j.bmu.Unlock()
		if r.q != nil {
			r.q.softPolled(r.seq)
		}
		crs[n] = r.cr
		n++
	}
	return n
}

// Rearm arms the CQ, then looks once more: a record that arrived before
// the arm would give no event, so it is kept for Poll and the caller told
// to poll first, as urma_rearm_jfc does.
func (j *jfc) Rearm(solicitedOnly bool) error {
	if j.closed.Load() {
		return errClosed("jfc")
	}
	if j.jfce == nil {
		return provider.Errorf(provider.ErrInvalid, "jfc has no jfce")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.bmu.Lock()
	unread := len(j.backlog)
	j.bmu.Unlock()
	if unread > 0 {
		return provider.ErrUnreadRecords
	}
	if !j.ctx.dev.attr.SolicitedEvents {
		solicitedOnly = false // see DeviceAttr.SolicitedEvents
	}
	if err := j.cq.ReqNotify(solicitedOnly); err != nil {
		return verbsErr("arm cq", err)
	}
	mode := int32(1)
	if solicitedOnly {
		mode = 2
	}
	j.armed.Store(mode)
	var peek [1]provider.CR
	if n, err := j.pollLocked(peek[:]); err != nil || n > 0 {
		j.armed.Store(0)
		if n > 0 {
			j.bmu.Lock()
			j.backlog = append([]softRecord{{cr: peek[0]}}, j.backlog...)
			j.bmu.Unlock()
		}
		if err != nil {
			return err
		}
		return provider.ErrUnreadRecords
	}
	return nil
}

func (j *jfc) Ack(n int) error {
	if j.closed.Load() {
		return errClosed("jfc")
	}
	hw, sw := j.hwEvents.Load(), j.swEvents.Load()
	if n < 0 || int32(n) > hw+sw {
		return provider.Errorf(provider.ErrInvalid, "ack of %d events, %d outstanding", n, hw+sw)
	}
	h := min(int32(n), hw)
	if h > 0 {
		j.cq.Ack(int(h))
		j.hwEvents.Add(-h)
	}
	j.swEvents.Add(-(int32(n) - h))
	return nil
}

// Modify accepts the moderation settings and ignores them: the verbs
// have no portable CQ moderation.
func (j *jfc) Modify(count int, period time.Duration) error {
	if j.closed.Load() {
		return errClosed("jfc")
	}
	if count < 0 || period < 0 {
		return provider.Errorf(provider.ErrInvalid, "negative moderation")
	}
	return nil
}

func (j *jfc) Close() error {
	j.ctx.closeMu.RLock()
	defer j.ctx.closeMu.RUnlock()
	if j.closed.Load() {
		return errClosed("jfc")
	}
	if n := j.users.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "jfc is used by %d queues", n)
	}
	if n := j.hwEvents.Load() + j.swEvents.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "%d completion events not acknowledged", n)
	}
	if err := j.src.Busy(); err != nil {
		return err
	}
	return j.forceClose()
}

func (j *jfc) forceClose() error {
	if j.closed.Swap(true) {
		return nil
	}
	if n := j.hwEvents.Swap(0); n > 0 {
		j.cq.Ack(int(n))
	}
	j.ctx.hub.unwatchObj(j.val)
	j.ctx.events.Forget(&j.src)
	if j.jfce != nil {
		j.jfce.remove(j)
	}
	j.ctx.untrack(j)
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.cq.Destroy(); err != nil {
		return verbsErr("destroy cq", err)
	}
	return nil
}
