package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// client is one load-generating client: its own JFS and JFR on the load
// generator's shared context (contexts are safe for concurrent use, and
// the queues are what must not be shared on the data path), completing
// into the JFC of the group that drives it. Its staging segment holds one request slot per window entry, laid
// out like the server's slots, so a request is WRITTEN from the same
// offsets it lands at.
type client struct {
	id     int
	gi     int // index in its group, carried by its receives' UserCtx
	cfg    *config
	cq     *exutil.Completions
	jfs    *jetty.JFS
	jfr    *jetty.JFR
	stage  *segment.Segment
	recv   *segment.Segment
	server *jetty.Remote
	// bells are the workers' doorbells when the server offers them (its
	// event mode), nil otherwise; requests to worker i then go through
	// bells[i] (see bell).
	bells   []*jetty.Remote
	region  *segment.Target
	workers int
	slot    int // bytes: slotSize of the value size
	resp    int // largest response
	rbuf    int // receive buffer size: gatherFor(window) responses
	nrecv   int // receive buffers: window + recvBatch; the JFR has room for a batch more
	signal  int
	// inline is the largest request sent inline: as in HERD, a request
	// is copied during the post, with no local segment to check and pin.
	inline int

	win    []inflight
	free   []int
	b      batch
	writes int
	rwrs   []jetty.RecvWR
	rsges  [][1]segment.SGE
	repost []int
	m      *model
	rng    *rand.Rand
	key    [keySize]byte
	next   int // preload cursor
	// pick is the random owned index the next request starts its search
	// at, drawn one request ahead so that its model word is prefetched:
	// the model is too big for the caches, and its word would otherwise be
	// the client's costliest miss.
	pick   int
	sent   uint64
	posts  uint64 // measured fills that issued requests
	rang   uint64 // doorbells rung
	hist   hist
	counts counts
	done   atomic.Uint64 // measured responses, for the progress line
	_      [56]byte
}

// inflight is a window entry's outstanding request.
type inflight struct {
	key int // owned index
	op  byte
	// ver is the key's version when the request was issued, or for a
	// PUT the version it stores.
	ver   uint32
	start time.Time
	live  bool // a request is outstanding in this window entry
}

// recvBatch is how many receive buffers a client reposts at once.
func recvBatch(window int) int { return min(window, 16) }

// clientDepths are the depths of a client's JFS and JFR, and the records
// it needs room for in its group's JFC.
func clientDepths(ctx *urma.Context, cfg *config) (jfs, jfr, jfc int) {
	nrecv := cfg.window + recvBatch(cfg.window)
	jfs = queueDepth(ctx, cfg.window, cfg.signal)
	jfr = nrecv + recvBatch(cfg.window)
	return jfs, jfr, jfs + jfr
}

func newClient(ctx *urma.Context, cfg *config, id, gi int, cq *exutil.Completions, jfrToken uint32) (*client, error) {
	c := &client{id: id, gi: gi, cfg: cfg, cq: cq, resp: respSize(cfg.value), m: newModel(id, cfg.clients, cfg.keys),
		rng: rand.New(rand.NewPCG(rand.Uint64(), uint64(id)))}
	c.nrecv = cfg.window + recvBatch(cfg.window)
	c.rbuf = gatherFor(cfg.window) * c.resp
	depth, rdepth, _ := clientDepths(ctx, cfg)
	c.signal = max(1, min(cfg.signal, depth/2))
	c.b = newBatch(cfg.window, 1)
	var err error
	c.inline = min(slotSize(cfg.value), ctx.Device().Attr().MaxInline)
	if c.jfs, err = jetty.NewJFS(ctx, jetty.JFSConfig{Depth: depth, Mode: urma.RM, MaxInline: c.inline, JFC: c.cq.JFC}); err != nil {
		return c, err
	}
	if c.jfr, err = jetty.NewJFR(ctx, jetty.JFRConfig{Depth: rdepth, Mode: urma.RM, JFC: c.cq.JFC,
		TokenPolicy: segment.TokenPlainText, Token: jfrToken}); err != nil {
		return c, err
	}
	if c.stage, err = segment.Alloc(ctx, uint64(cfg.window*slotSize(cfg.value)), segment.Config{Access: segment.LocalOnly}); err != nil {
		return c, err
	}
	if c.recv, err = segment.Alloc(ctx, uint64(c.nrecv*c.rbuf), segment.Config{Access: segment.LocalOnly}); err != nil {
		return c, err
	}
	c.pick = c.rng.IntN(c.m.owned())
	c.win = make([]inflight, cfg.window)
	for i := range cfg.window {
		c.free = append(c.free, cfg.window-1-i)
	}
	c.rwrs = make([]jetty.RecvWR, c.nrecv)
	c.rsges = make([][1]segment.SGE, c.nrecv)
	return c, nil
}

// connect imports the server's JFR and prepares the path to it, then
// posts every receive buffer.
func (c *client) connect(ctx *urma.Context, theirs *bootstrap.Bundle, workers int, region *segment.Target) error {
	c.workers, c.slot, c.region = workers, slotSize(c.cfg.value), region
	var err error
	if c.server, err = theirs.Import(context.Background(), ctx, "server"); err != nil {
		return fmt.Errorf("import the server's JFR: %w", err)
	}
	if err := c.jfs.Advise(context.Background(), c.server); err != nil {
		return err
	}
	if _, err := theirs.Lookup(bellName(0)); err == nil {
		if !ctx.Device().Attr().ImmData {
			return fmt.Errorf("the server's workers want WRITE_IMM doorbells, which %v cannot send: run the server with -mode poll", ctx.Device())
		}
		for i := range workers {
			r, err := theirs.Import(context.Background(), ctx, bellName(i))
			c.bells = append(c.bells, r)
			if err != nil {
				return fmt.Errorf("import the doorbell of worker %d: %w", i, err)
			}
			if err := c.jfs.Advise(context.Background(), r); err != nil {
				return err
			}
		}
	}
	for i := range c.nrecv {
		c.repost = append(c.repost, i)
	}
	return c.postRecvs()
}

func (c *client) close() error {
	if c == nil {
		return nil
	}
	errs := []error{c.server.Unimport()}
	for _, r := range c.bells {
		errs = append(errs, r.Unimport())
	}
	return errors.Join(append(errs, c.jfs.Close(), c.jfr.Close(),
		c.stage.Unregister(), c.recv.Unregister())...)
}

// postRecvs posts the receive buffers waiting in c.repost, in one batch.
// A JFR that refuses some as full is not an error: on loopback a slot
// stays taken while another sender still copies into it, even if later
// receives have completed. Those buffers wait for the next batch; the
// JFR's spare depth keeps enough receives posted meanwhile.
func (c *client) postRecvs() error {
	for i, idx := range c.repost {
		c.rsges[i][0] = c.recv.SGE(uint64(idx*c.rbuf), uint32(c.rbuf))
		w := &c.rwrs[i] // filled in place (see the batch's next)
		w.UserCtx, w.Local = uint64(c.gi)<<32|uint64(idx), c.rsges[i][:]
	}
	posted := len(c.repost)
	if err := c.jfr.PostRecv(c.rwrs[:posted]); err != nil {
		var pe *jetty.PostError
		if !errors.As(err, &pe) || !errors.Is(err, urma.ErrAgain) {
			return err
		}
		posted = pe.Index
	}
	c.repost = c.repost[:copy(c.repost, c.repost[posted:])]
	return nil
}

// phase is one run of requests: the preload (a PUT of every owned key) or
// the measured mix.
type phase struct {
	preload  bool
	budget   int64     // requests to issue; < 0: no limit
	deadline time.Time // stop issuing then; zero: never
	issued   int64
}

// begin starts a phase.
func (c *client) begin(p *phase) {
	if p.preload {
		c.next, p.budget = 0, int64(c.m.owned())
	}
}

// fill issues requests into the free window entries while the phase has
// budget left, and posts them. It returns false once the phase is over
// for c: nothing more to issue and nothing outstanding.
func (c *client) fill(p *phase, now time.Time) (bool, error) {
	if !p.deadline.IsZero() && now.After(p.deadline) {
		p.budget = p.issued
	}
	// In batch mode, as redis-benchmark -P pipelines, a client issues
	// nothing while any of its requests is outstanding, then fills its
	// whole window in one post.
	batched := c.cfg.batch && len(c.free) < len(c.win)
	issued, queued := p.issued, c.b.n
	for !batched && len(c.free) > 0 && (p.budget < 0 || p.issued < p.budget) {
		if err := c.issue(p.preload, now); err != nil {
			return false, err
		}
		p.issued++
	}
	c.ring(queued)
	if p.issued > issued && !p.preload {
		c.posts++
	}
	if _, err := c.b.post(c.jfs); err != nil {
		return false, fmt.Errorf("client %d: %w", c.id, c.cq.Explain(err))
	}
	return len(c.free) < len(c.win) || c.b.n > 0, nil
}

// issue stages the next request in a free window entry.
func (c *client) issue(preload bool, now time.Time) error {
	w := c.free[len(c.free)-1]
	c.free = c.free[:len(c.free)-1]
	var j int
	op := byte(opPut)
	if preload {
		j, c.next = c.next, c.next+1
	} else {
		j = c.m.free(c.pick)
		c.pick = c.rng.IntN(c.m.owned())
		c.m.prefetch(c.pick)
		if c.rng.Float64() < c.cfg.getRatio {
			op = opGet
		}
	}
	ver := c.m.take(j)
	size := slotSize(c.cfg.value)
	slot := c.stage.Bytes()[w*size : (w+1)*size]
	keyOf(&c.key, c.m.id(j))
	// The window entry is filled in place, not copied from a literal
	// (see the batch's next).
	f := &c.win[w]
	f.key, f.op, f.ver, f.start, f.live = j, op, ver, now, true
	var off int
	var err error
	if op == opGet {
		off, err = putGet(slot, c.key[:])
	} else {
		f.ver = nextVersion(ver)
		val := slot[size-slotTail-c.cfg.value : size-slotTail]
		fillValue(val, c.m.id(j), f.ver)
		off, err = putPut(slot, c.key[:], val)
	}
	if err != nil {
		return err
	}
	// The request goes to a worker at random, into this client's slot of
	// the same window entry: free while the entry is.
	worker := c.rng.IntN(c.workers)
	remote := ((worker*c.cfg.clients+c.id)*c.cfg.window + w) * c.slot
	n := uint32(size - off)
	var flags jetty.Flags
	if c.writes++; c.writes%c.signal == 0 {
		flags = jetty.Signaled
	}
	to := c.server
	if c.bells != nil {
		to = c.bells[worker]
	}
	wr, local := c.b.next()
	wr.Opcode, wr.Flags, wr.To, wr.UserCtx = urma.OpWrite, flags, to, uint64(worker)<<32|uint64(w)
	wr.Remote = c.region.SGE(uint64(remote+c.slot-int(n)), n)
	if int(n) <= c.inline {
		wr.Flags |= jetty.Inline
		wr.Inline = slot[off:]
	} else {
		wr.Local = append(local, c.stage.SGE(uint64(w*size+off), n))
	}
	c.sent++
	return nil
}

// ring makes the last of the queued requests from index from on to each
// worker a WRITE_IMM that rings its bell, when the server has bells; the
// requests before from were rung for when they were queued. The
// immediate is the request's slot in the worker's part. With more than
// one worker the ring is signaled: on verbs each bell is reached through
// a QP of its own, and a completion retires only the unsignaled requests
// of its own QP, so every QP's unsignaled requests need a signaled one
// after them, or they would hold their slots of the send queue.
func (c *client) ring(from int) {
	if c.bells == nil {
		return
	}
	var rung uint64 // by worker; there are at most maxWorkers (64)
	for i := c.b.n - 1; i >= from; i-- {
		wr := &c.b.wrs[i]
		worker := wr.UserCtx >> 32
		if rung&(1<<worker) != 0 {
			continue
		}
		rung |= 1 << worker
		c.rang++
		wr.Opcode, wr.Imm = urma.OpWriteImm, uint64(c.id*c.cfg.window)+uint64(uint32(wr.UserCtx))
		if c.workers > 1 {
			wr.Flags |= jetty.Signaled
		}
	}
}

// receive checks the responses of a message against the model, frees
// their window entries and reposts receive buffers in batches; now is
// when it was polled.
func (c *client) receive(cr *jetty.CR, measured bool, now time.Time) error {
	idx := int(uint32(cr.UserCtx))
	if idx >= c.nrecv || int(cr.Len) > c.rbuf || cr.Len == 0 {
		return fmt.Errorf("unexpected receive %v", cr)
	}
	msg := c.recv.Bytes()[idx*c.rbuf : idx*c.rbuf+int(cr.Len)]
	for len(msg) > 0 {
		var r response
		var err error
		if r, msg, err = nextResponse(msg); err != nil {
			return err
		}
		if err := c.answered(r, measured, now); err != nil {
			return err
		}
	}
	if c.repost = append(c.repost, idx); len(c.repost) >= recvBatch(c.cfg.window) {
		return c.postRecvs()
	}
	return nil
}

// answered checks one response against the model and frees its window
// entry.
func (c *client) answered(r response, measured bool, now time.Time) error {
	if r.window >= len(c.win) || !c.win[r.window].live {
		return fmt.Errorf("response for window entry %d, which has no request outstanding", r.window)
	}
	f := &c.win[r.window]
	if err := c.check(f, r, measured); err != nil {
		return err
	}
	c.m.settle(f.key, f.ver)
	f.live = false
	c.free = append(c.free, r.window)
	if measured {
		c.hist.record(now.Sub(f.start))
		c.done.Add(1)
	}
	return nil
}

// check compares a response with the model and counts it.
func (c *client) check(f *inflight, r response, measured bool) error {
	var n counts
	if f.op == opPut {
		if r.status != stOK {
			return fmt.Errorf("PUT of key %d: status %d", c.m.id(f.key), r.status)
		}
		n.puts++
	} else {
		known, err := c.m.check(f.key, f.ver, r, c.cfg.value)
		if err != nil {
			return err
		}
		n.gets++
		switch r.status {
		case stOK:
			n.found++
		case stNotFound:
			n.missing++
		}
		if !known {
			n.unchecked++
		}
	}
	if measured {
		c.counts.add(n)
	}
	return nil
}
