package loopback

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/urma-go/sdk/provider"
)

// recvSlot is a receive request as it lies in a receive ring, followed by
// nsge recvSGEs. Buffers are named by segment handle, not by pointer.
type recvSlot struct {
	userCtx uint64
	nsge    uint32
	_       uint32
}

type recvSGE struct {
	addr   uint64
	length uint32
	handle uint32
}

// recvq is the receive side of a JFR or of a Jetty with its own queue.
type recvq struct {
	ctx         *lbContext
	id          uint32
	maxSGE      int
	depth       int
	mode        provider.TransportMode
	tokenPolicy provider.TokenPolicy
	token       uint32
	jfc         *jfc
	ring        *ring
	crFlags     provider.CRFlags
	state       atomic.Uint32
	closed      atomic.Bool

	mu      sync.Mutex
	waiters []*sendq // senders in RNR wait on this queue
}

func (c *lbContext) newRecvq(cfg provider.JFRConfig) (*recvq, error) {
	if cfg.Depth <= 0 || cfg.Depth > maxDepth {
		return nil, provider.Errorf(provider.ErrInvalid, "jfr depth %d not in [1,%d]", cfg.Depth, maxDepth)
	}
	if cfg.MaxSGE <= 0 || cfg.MaxSGE > maxSGE {
		return nil, provider.Errorf(provider.ErrInvalid, "jfr max sge %d not in [1,%d]", cfg.MaxSGE, maxSGE)
	}
	if !cfg.Mode.Valid() {
		return nil, provider.Errorf(provider.ErrInvalid, "transport mode %v", cfg.Mode)
	}
	if cfg.TokenPolicy > provider.TokenPlainText {
		return nil, provider.Errorf(provider.ErrNotSupported, "token policy %v", cfg.TokenPolicy)
	}
	j, err := c.ownJFC(cfg.JFC)
	if err != nil {
		return nil, err
	}
	r, err := newRing("jfr", cfg.Depth, unsafe.Sizeof(recvSlot{})+uintptr(cfg.MaxSGE)*unsafe.Sizeof(recvSGE{}))
	if err != nil {
		return nil, err
	}
	q := &recvq{ctx: c, maxSGE: cfg.MaxSGE, depth: cfg.Depth, mode: cfg.Mode, tokenPolicy: cfg.TokenPolicy,
		token: cfg.Token, jfc: j, ring: r}
	q.state.Store(uint32(provider.StateReady))
	j.users.Add(1)
	return q, nil
}

// ownJFC checks that a JFC belongs to this context and is open.
func (c *lbContext) ownJFC(p provider.JFC) (*jfc, error) {
	j, ok := p.(*jfc)
	if !ok || j == nil || j.ctx != c {
		return nil, provider.Errorf(provider.ErrInvalid, "jfc missing or of another context")
	}
	if j.closed.Load() {
		return nil, errClosed("jfc")
	}
	return j, nil
}

func (q *recvq) sges(pos uint64) []recvSGE {
	p := q.ring.payload(pos)
	s := (*recvSlot)(p)
	return unsafe.Slice((*recvSGE)(unsafe.Add(p, unsafe.Sizeof(recvSlot{}))), q.maxSGE)[:s.nsge]
}

func (q *recvq) postRecv(wrs []provider.RecvWR) (int, error) {
	if q.closed.Load() {
		return 0, errClosed("jfr")
	}
	if provider.State(q.state.Load()) != provider.StateReady {
		return 0, provider.Errorf(provider.ErrBadState, "jfr is %v", provider.State(q.state.Load()))
	}
	for i := range wrs {
		w := &wrs[i]
		if len(w.Local) > q.maxSGE {
			return i, provider.Errorf(provider.ErrInvalid, "%d sges, jfr allows %d", len(w.Local), q.maxSGE)
		}
		for k := range w.Local {
			if _, err := q.ctx.localSeg(w.Local[k].Seg); err != nil {
				return i, err
			}
		}
		pos, ok := q.ring.reserve()
		if !ok {
			return i, provider.Errorf(provider.ErrAgain, "jfr is full (depth %d)", q.depth)
		}
		p := q.ring.payload(pos)
		*(*recvSlot)(p) = recvSlot{userCtx: w.UserCtx, nsge: uint32(len(w.Local))}
		dst := unsafe.Slice((*recvSGE)(unsafe.Add(p, unsafe.Sizeof(recvSlot{}))), q.maxSGE)
		for k := range w.Local {
			s, _ := q.ctx.localSeg(w.Local[k].Seg)
			dst[k] = recvSGE{addr: w.Local[k].Addr, length: w.Local[k].Len, handle: s.handle}
		}
		q.ring.publish(pos)
	}
	q.wakeSenders()
	return len(wrs), nil
}

// wakeSenders lets senders waiting for a receive retry now rather than at
// their next RNR timer tick.
func (q *recvq) wakeSenders() {
	q.mu.Lock()
	if len(q.waiters) == 0 {
		q.mu.Unlock()
		return
	}
	ws := q.waiters
	q.waiters = nil
	q.mu.Unlock()
	for _, s := range ws {
		s.kick()
	}
}

func (q *recvq) addWaiter(s *sendq) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, x := range q.waiters {
		if x == s {
			return
		}
	}
	q.waiters = append(q.waiters, s)
}

func (q *recvq) query() (provider.QueueAttr, error) {
	if q.closed.Load() {
		return provider.QueueAttr{}, errClosed("jfr")
	}
	return provider.QueueAttr{ID: q.ctx.jettyID(q.id), State: provider.State(q.state.Load()), Mode: q.mode,
		Depth: q.depth, Outstanding: q.ring.count()}, nil
}

func (q *recvq) modify(s provider.State) error {
	if q.closed.Load() {
		return errClosed("jfr")
	}
	switch s {
	case provider.StateReset, provider.StateReady, provider.StateError:
		q.state.Store(uint32(s))
		return nil
	}
	return provider.Errorf(provider.ErrInvalid, "jfr state %v", s)
}

func (q *recvq) destroy() {
	if q.closed.Swap(true) {
		return
	}
	q.jfc.users.Add(-1)
	q.ring.close()
}

// endpoint is what an import finds: a JFR, or a Jetty and its receive queue.
type endpoint struct {
	desc  provider.JettyDesc
	token uint32
	rq    *recvq
	jetty *jettyObj
}

type jfrObj struct {
	*recvq
	ep      *endpoint
	src     eventSource
	sharers atomic.Int32
}

func (c *lbContext) NewJFR(cfg provider.JFRConfig) (provider.JFR, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	q, err := c.newRecvq(cfg)
	if err != nil {
		return nil, err
	}
	j := &jfrObj{recvq: q}
	j.src.owner = cfg.Owner
	if j.src.owner == nil {
		j.src.owner = j
	}
	if q.id, err = c.adopt(j); err != nil {
		q.destroy()
		return nil, err
	}
	j.ep = &endpoint{desc: provider.JettyDesc{ID: c.jettyID(q.id), Kind: provider.KindJFR, Mode: cfg.Mode,
		TokenPolicy: cfg.TokenPolicy}, token: cfg.Token, rq: q}
	c.addEndpoint(j.ep)
	return j, nil
}

func (c *lbContext) addEndpoint(ep *endpoint) {
	c.mu.Lock()
	c.recvqs[ep.desc.ID.ID] = ep
	c.mu.Unlock()
}

func (c *lbContext) removeEndpoint(id uint32) {
	c.mu.Lock()
	delete(c.recvqs, id)
	c.mu.Unlock()
}

func (j *jfrObj) PostRecv(wrs []provider.RecvWR) (int, error) { return j.postRecv(wrs) }
func (j *jfrObj) Desc() provider.JettyDesc                    { return j.ep.desc }
func (j *jfrObj) Query() (provider.QueueAttr, error)          { return j.query() }
func (j *jfrObj) Modify(s provider.State) error               { return j.modify(s) }

func (j *jfrObj) Close() error {
	if j.closed.Load() {
		return errClosed("jfr")
	}
	if n := j.sharers.Load(); n > 0 {
		return provider.Errorf(provider.ErrBusy, "jfr is shared by %d jetties", n)
	}
	if err := j.src.busy(); err != nil {
		return err
	}
	j.ctx.disown(j)
	j.destroy()
	return nil
}

func (j *jfrObj) destroy() {
	j.ctx.removeEndpoint(j.id)
	j.ctx.events.forget(&j.src)
	j.recvq.destroy()
}

// localSeg resolves an SGE's segment to a live segment of this context.
func (c *lbContext) localSeg(m provider.MemRef) (*segment, error) {
	s, ok := provider.RawMem(m).(*segment)
	if !ok || s == nil {
		return nil, provider.Errorf(provider.ErrInvalid, "sge does not name a local loopback segment")
	}
	if s.ctx != c {
		return nil, provider.Errorf(provider.ErrInvalid, "sge names a segment of another context")
	}
	if s.closed.Load() {
		return nil, errClosed("local segment")
	}
	return s, nil
}
