package perf

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/spin"
	"github.com/urma-go/sdk/urma"
)

// run is one size of one test on one side: the requests and what the
// loops share.
type run struct {
	e    *endpoint
	size int
	// wr is the request the loop posts, PostList copies of it for post
	// lists: the default loops post wr[:1] or wr[:k] with the queue's
	// Post, which keeps no reference to the slice, so that nothing is
	// allocated per post. recvs are the receives they repost with
	// PostRecv, RxDepth of them, all on the first region.
	wr    []jetty.WR
	recvs []jetty.RecvWR
	// A tuned run prepares instead: recv is recvs as a prepared list,
	// quiet and loud wr[0] unsignaled and signaled, which the tuned
	// loops post one at a time (see jetty.Prepared). All are nil in a
	// default run.
	recv        *jetty.PreparedRecv
	quiet, loud *jetty.Prepared
	// until, when set, ends the client's loop by time instead of count.
	until time.Time
	// ctx ends a loop (the peer is done, or failed); progress counts
	// finished iterations.
	ctx      context.Context
	progress *atomic.Int64
}

// newRun prepares the requests of the test at size bytes.
func newRun(ctx context.Context, e *endpoint, size int, progress *atomic.Int64) (*run, error) {
	r := &run{ctx: ctx, e: e, size: size, progress: progress}
	w := jetty.WR{Local: []segment.SGE{e.seg.SGE(uint64(e.stride), uint32(size))}}
	if e.jetty == nil {
		w.To = e.peer // a bound Jetty needs none
	}
	if e.tgt != nil {
		w.Remote = e.tgt.SGE(0, uint32(size))
	}
	switch e.cfg.Test.Op {
	case Read:
		w.Opcode = urma.OpRead
	case Write:
		w.Opcode = urma.OpWrite
	case Send:
		w.Opcode = urma.OpSend
	case Atomic:
		w.Opcode = urma.OpFAdd
		if e.cfg.CAS {
			w.Opcode = urma.OpCAS
		}
	}
	if (w.Opcode == urma.OpWrite || w.Opcode == urma.OpSend) && size <= e.inline {
		w.Flags |= jetty.Inline
		w.Inline, w.Local = e.sendBuf(size), nil
	}
	if e.cfg.Test.Op == Atomic {
		w.Operand = 1 // bandwidth adds 1 each time; latency sets its own
	}
	r.wr = make([]jetty.WR, e.cfg.PostList)
	for i := range r.wr {
		r.wr[i] = w
	}
	// Receives take the whole region, so that those left posted by a
	// smaller size fit the next.
	r.recvs = make([]jetty.RecvWR, e.cfg.RxDepth)
	sge := []segment.SGE{e.seg.SGE(0, uint32(e.region))}
	for i := range r.recvs {
		r.recvs[i].Local = sge
	}
	if !e.cfg.Tuned {
		return r, nil
	}
	var err error
	w.Flags &^= jetty.Signaled
	if r.quiet, err = e.prepare(w); err != nil {
		return nil, err
	}
	w.Flags |= jetty.Signaled
	if r.loud, err = e.prepare(w); err != nil {
		return nil, err
	}
	if r.recv, err = e.prepareRecv(r.recvs); err != nil {
		return nil, err
	}
	e.prepared += 3
	return r, nil
}

// more reports whether the client's iteration i should run. Small enough
// to be inlined into the latency loops, which then pay for the clock only
// in a timed run (-D), every 64 iterations.
func (r *run) more(i int, limit int) bool {
	return i < limit && (r.until.IsZero() || r.beforeUntil(i))
}

// beforeUntil tells whether a timed run's end is still ahead, looking at
// the clock at every 64th iteration i.
func (r *run) beforeUntil(i int) bool { return i%64 != 0 || time.Now().Before(r.until) }

// postRecvs posts n receives into the first region, in one call per
// RxDepth: PostRecv of a prefix of recvs, or in a tuned run the prepared
// list's.
func (r *run) postRecvs(n int) error {
	for n > 0 {
		k := min(n, len(r.recvs))
		var err error
		if r.recv != nil {
			err = r.recv.PostFirst(k)
		} else {
			err = r.e.postRecv(r.recvs[:k])
		}
		if err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// fillRecvs posts receives until RxDepth are posted. It runs before each
// size, and the loops call it to replace the receives they consumed.
func (r *run) fillRecvs() error {
	if err := r.postRecvs(r.e.cfg.RxDepth - r.e.recvsPosted); err != nil {
		return err
	}
	r.e.recvsPosted = r.e.cfg.RxDepth
	return nil
}

// reap waits for records of j and counts them: receives into pendingRecv
// (and off recvsPosted, until fillRecvs replaces them), send-side ones off
// pendingSend. j is e.jfc to retire requests, e.rjfc to take receives;
// when they are one JFC, either kind may come.
func (r *run) reap(j *jetty.JFC) error { return r.reapIn(r.ctx, j) }

// reapIn is reap, its wait ended by ctx.
func (r *run) reapIn(ctx context.Context, j *jetty.JFC) error {
	n, err := r.e.poll(ctx, j)
	if err != nil {
		return err
	}
	return r.count(n)
}

// postOne posts the request, signaled, once the queue has room: Post of
// wr[:1], or in a tuned run the prepared request's Post.
func (r *run) postOne() error {
	for r.e.pendingSend >= r.e.cfg.TxDepth {
		if err := r.reap(r.e.jfc); err != nil {
			return err
		}
	}
	var err error
	if r.loud != nil {
		err = r.loud.Post()
	} else {
		r.wr[0].Flags |= jetty.Signaled
		err = r.e.post(r.wr[:1])
	}
	if err != nil {
		return err
	}
	r.e.pendingSend++
	return nil
}

// progressEvery is how many iterations a latency loop runs between its
// updates of the progress count, which a line a second reads. An atomic
// store is an XCHG on amd64, a full fence, and on every iteration it
// would sit between the peer's answer and the next post; the count needs
// no such precision.
const progressEvery = 1024

// latLoop runs the client's latency loop into samples (nanoseconds of
// each iteration: a round trip for write and send) and returns how many
// it took; samples needs room for one more. Every request is signaled.
func (r *run) latLoop(samples []int64) (int, error) {
	switch {
	case !r.e.cfg.Tuned:
		return r.latPlain(samples)
	case !r.chained():
		return r.latClient(samples)
	case r.e.cfg.Test.Op == Read || r.e.cfg.Test.Op == Atomic:
		return r.latOneSided(samples)
	}
	return r.latChained(samples)
}

// latOneSided is latChained for READ and atomics, whose next request waits
// for the last one's record alone: the loop has nothing else to do between
// the poll that finds the record and the clock read after the next post,
// and none of latChained's choices to make on the way. (With an atomic
// completing as it is posted, as on loopback, the loop's own work is a
// large part of an iteration's instructions; bench/loop-instructions
// counts them.)
func (r *run) latOneSided(samples []int64) (int, error) {
	clock := startStopwatch()
	setAtomic := r.e.cfg.Test.Op == Atomic
	var compare uint64
	i := 0
	for ; r.more(i, len(samples)-1); i++ {
		if setAtomic {
			r.loud.SetAtomic(compare, compare+1)
			compare++
		}
		var err error
		if i == 0 {
			err = r.postOne()
		} else {
			err = r.postAfterRecords(r.e.jfc)
		}
		samples[i] = clock.now()
		if err != nil {
			return i, err
		}
		if i%progressEvery == 0 {
			r.progress.Store(int64(i + 1))
		}
	}
	err := r.drain()
	samples[i] = clock.now()
	clock.durations(samples, i)
	return i, err
}

// latPlain is the default latency loop, the one a user writes from the
// jetty package's documentation, as perftest's loops are written: each
// iteration reads the clock, then
//   - write_lat: stores the iteration's marker in the last byte of the
//     source, posts the WRITE, polls for its record and spins on the last
//     byte of the receive region until the peer's answering WRITE lands;
//   - send_lat: posts the SEND, polls for its record (reposting the
//     receives consumed), then polls for the receive of the answer;
//   - read_lat and atomic_lat: posts the request and polls for its record.
//
// An iteration lasts until the next one starts.
func (r *run) latPlain(samples []int64) (int, error) {
	clock := startStopwatch()
	e, op := r.e, r.e.cfg.Test.Op
	sb := e.sendBuf(r.size)
	var compare uint64
	i := 0
	for ; r.more(i, len(samples)-1); i++ {
		samples[i] = clock.now()
		var err error
		switch op {
		case Write:
			// The last WRITE was retired: its bytes are free.
			sb[r.size-1] = marker(i)
			if err = r.postOne(); err == nil {
				err = r.drain()
			}
			if err == nil {
				err = awaitLast(r.ctx, e.recvBuf(r.size), marker(i), &e.pace)
			}
		case Send:
			if err = r.postAnswer(); err == nil {
				err = r.awaitRecv()
			}
		default:
			if e.cfg.CAS {
				// Each CAS finds what the last one swapped in.
				r.wr[0].Compare, r.wr[0].Operand = compare, compare+1
				compare++
			}
			if err = r.postOne(); err == nil {
				err = r.drain()
			}
		}
		if err != nil {
			return i, err
		}
		if i%progressEvery == 0 {
			r.progress.Store(int64(i + 1))
		}
	}
	samples[i] = clock.now()
	clock.durations(samples, i)
	return i, nil
}

// latClient is latLoop for SEND in event mode of a tuned run.
//
// As perftest does, the loop reads the clock once per iteration, at its
// start (an iteration lasts until the next one starts), and retires its
// request's record right after the post, while the peer works: between
// the peer's answer and the next post, the critical path of a round trip,
// it only reads the clock. Receives consumed are replaced after the post,
// too, when another one is still posted for the peer's next message.
func (r *run) latClient(samples []int64) (int, error) {
	clock := startStopwatch()
	i := 0
	for ; r.more(i, len(samples)-1); i++ {
		samples[i] = clock.now()
		if err := r.postAnswer(); err != nil {
			return i, err
		}
		if err := r.awaitRecv(); err != nil {
			return i, err
		}
		if i%progressEvery == 0 {
			r.progress.Store(int64(i + 1))
		}
	}
	samples[i] = clock.now()
	clock.durations(samples, i)
	return i, r.drain()
}

// latChained is latLoop where the next request waits only for one thing,
// and leaves the moment it happens, as perftest posts its next request
// the moment it sees it: for SEND (when receives have a JFC of their own)
// the peer's answer, and the poll that finds it posts the request
// (jetty.Prepared.PostAfter); for WRITE the last byte of the peer's
// answer, whose arrival posts it (jetty.Prepared.PostWhen). READ and
// atomics, which wait for the last request's record, have latOneSided.
// The clock is read right after each post, so an iteration lasts from one
// post to the next (the last one, until its record or answer).
func (r *run) latChained(samples []int64) (int, error) {
	clock := startStopwatch()
	e, op := r.e, r.e.cfg.Test.Op
	sb := e.sendBuf(r.size)
	i := 0
	for ; r.more(i, len(samples)-1); i++ {
		if op == Write {
			// The last WRITE was retired: its bytes are free.
			sb[r.size-1] = marker(i)
		}
		var err error
		switch {
		case i == 0:
			err = r.postOne()
		case op == Send:
			err = r.postAfterRecv()
		default:
			err = r.postWhen(marker(i - 1))
		}
		samples[i] = clock.now()
		if err == nil {
			err = r.retire()
		}
		if err != nil {
			return i, err
		}
		if i%progressEvery == 0 {
			r.progress.Store(int64(i + 1))
		}
	}
	var err error
	switch {
	case op == Send:
		err = r.awaitRecv()
	case i > 0:
		err = awaitLast(r.ctx, e.recvBuf(r.size), marker(i-1), &e.pace)
	}
	samples[i] = clock.now()
	clock.durations(samples, i)
	return i, err
}

// chained tells whether the tuned latency loops post the moment what the
// request waits for arrives (latChained): always but for SEND when one
// JFC takes both kinds of records (event mode), where a poll could find
// only this side's own.
func (r *run) chained() bool {
	switch r.e.cfg.Test.Op {
	case Read, Atomic, Write:
		return true
	case Send:
		return r.e.rjfc != r.e.jfc
	}
	return false
}

// postAfterRecv consumes the peer's next message and posts the loop's
// request from the poll that finds it.
func (r *run) postAfterRecv() error {
	if r.e.pendingRecv > 0 {
		r.e.pendingRecv--
		return r.postOne()
	}
	if err := r.postAfterRecords(r.e.rjfc); err != nil {
		return err
	}
	r.e.pendingRecv--
	return nil
}

// postWhen posts the loop's request the moment the last byte of the
// receive region holds m: the peer's WRITE has landed.
func (r *run) postWhen(m byte) error {
	rb := r.e.recvBuf(r.size)
	if err := r.loud.PostWhen(r.ctx, &rb[r.size-1], m); err != nil {
		if r.ctx.Err() != nil {
			return errStopped
		}
		return err
	}
	r.e.pendingSend++
	return nil
}

// postAfterRecords posts the loop's request from the poll that finds
// records of j, and counts them.
func (r *run) postAfterRecords(j *jetty.JFC) error {
	e := r.e
	n, err := r.loud.PostAfter(r.ctx, j, e.crs, e.cfg.Spin)
	if err != nil && r.ctx.Err() != nil {
		return errStopped
	}
	if cerr := r.count(n); cerr != nil {
		return cerr
	}
	if err != nil {
		return err
	}
	e.pendingSend++
	return nil
}

// count counts the first n records of e.crs as reap does, and returns the
// error of the first failed one. The records are counted even then.
func (r *run) count(n int) error {
	e := r.e
	rc, bad := tally(e.crs[:n])
	e.pendingRecv += rc
	e.recvsPosted -= rc
	e.pendingSend -= n - rc
	if bad >= 0 {
		return failedCR(&e.crs[bad])
	}
	return nil
}

// postAnswer posts the loop's request and waits for its record, then
// replaces the receives consumed. A receive is replaced before the post
// when none is left for the peer's answer, which would otherwise find
// none.
func (r *run) postAnswer() error {
	if r.e.recvsPosted == 0 && r.e.cfg.Test.Op == Send {
		if err := r.fillRecvs(); err != nil {
			return err
		}
	}
	if err := r.postOne(); err != nil {
		return err
	}
	return r.retire()
}

// retire waits for the loop's request to complete and replaces the
// receives consumed.
func (r *run) retire() error {
	if err := r.drain(); err != nil {
		return err
	}
	if r.e.recvsPosted < r.e.cfg.RxDepth {
		return r.fillRecvs()
	}
	return nil
}

// awaitRecv waits for a receive to complete and consumes it.
func (r *run) awaitRecv() error {
	for r.e.pendingRecv == 0 {
		if err := r.reap(r.e.rjfc); err != nil {
			return err
		}
	}
	r.e.pendingRecv--
	return nil
}

// drain waits for this side's requests still running.
func (r *run) drain() error { return r.drainIn(r.ctx) }

// drainIn is drain, its waits ended by ctx.
func (r *run) drainIn(ctx context.Context) error {
	for r.e.pendingSend > 0 {
		if err := r.reapIn(ctx, r.e.jfc); err != nil {
			return err
		}
	}
	return nil
}

// leftoverWait bounds how long a server waits for the record of the last
// size's final answer (a variable for the test).
var leftoverWait = 10 * time.Second

// retireLeftover waits for the records of requests the last size's loop
// left running. That loop ends when the client says done, which may come
// before its final answer's record (siw's did): a post into the queue of
// depth 1 would then find it full. A record that never comes is an error,
// not a hang of both sides.
func (r *run) retireLeftover() error {
	ctx, cancel := context.WithTimeout(r.ctx, leftoverWait)
	defer cancel()
	err := r.drainIn(ctx)
	if err != nil && r.ctx.Err() == nil && ctx.Err() != nil {
		return fmt.Errorf("the last size's final answer did not complete within %v", leftoverWait)
	}
	return err
}

// latServer answers the client's WRITEs or SENDs until stop, and returns
// how many. Like the client, it retires its request's record after the
// post. READ latency needs nothing of it; atomic latency has it spin on
// the target word (atomicResponder).
func (r *run) latServer() (int64, error) {
	e, op := r.e, r.e.cfg.Test.Op
	switch op {
	case Read:
		return 0, nil
	case Atomic:
		return 0, r.atomicResponder()
	}
	if err := r.retireLeftover(); err != nil {
		return 0, err
	}
	sb := e.sendBuf(r.size)
	var n int64
	tuned := e.cfg.Tuned
	chained := tuned && r.chained()
	for i := 0; ; i++ {
		m := marker(i)
		// The last answer was retired: its bytes are free.
		sb[r.size-1] = m
		var err error
		switch {
		case op == Write && !tuned:
			// As perftest's write_lat: wait for the message, then answer.
			if err = awaitLast(r.ctx, e.recvBuf(r.size), m, &e.pace); err == nil {
				err = r.postOne()
			}
			if err == nil {
				err = r.drain()
			}
		case op == Write:
			// The answer leaves the moment the message lands.
			if err = r.postWhen(m); err == nil {
				err = r.retire()
			}
		case chained:
			// The answer leaves from the poll that finds the message.
			if err = r.postAfterRecv(); err == nil {
				err = r.retire()
			}
		default:
			if err = r.awaitRecv(); err == nil {
				err = r.postAnswer()
			}
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// atomicResponder is the atomic_lat server's loop: it spins reading the
// target word of the client's atomics until the client is done, as
// ucx_perftest's responder does in its ucp_fadd and ucp_cswap tests (the
// passive side of its one-way loop ends in wait_last_iter, reading the
// word until the last operation's value is there). The reads keep the
// word's cache line moving between the two sides' cores, which is part of
// what an atomic costs when its target is watched; both harnesses then do
// the same work. It counts its reads and the changes it saw, and returns
// errStopped once the client says done.
func (r *run) atomicResponder() error {
	e := r.e
	word := (*uint64)(unsafe.Pointer(&e.recvBuf(atomicSize)[0]))
	// The word starts each size cleared (serveSize), and the first
	// atomic of either kind makes it non-zero.
	var last uint64
	var reads, seen int64
	defer func() { e.responderReads += reads; e.responderSeen += seen }()
	var wait spin.Wait
	look := func() {
		v := atomic.LoadUint64(word)
		reads++
		if v != last {
			last = v
			seen++
		}
	}
	for {
		look()
		// A peer on the same core gets it now and then, as awaitLast's.
		wait.Idle()
		if e.pace.Tick() && r.ctx.Err() != nil {
			// A last look, after the client's "done": a responder
			// that was off its core for the whole run still sees
			// the word the run left.
			look()
			return errStopped
		}
	}
}
