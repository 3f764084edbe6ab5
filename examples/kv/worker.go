package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/spin"
	"github.com/urma-go/sdk/urma"
)

// worker polls its part of the request region, [client][window] slots,
// and answers each client from a JFS of its own, all completing into the
// worker's JFC. One JFS per client rather than one RM JFS for all: on
// verbs an RM JFS reaches each remote through a QP of its own, and a
// completion retires only the unsignaled requests of its own QP, so a
// client that stops would pin the shared queue's oldest slots until it
// filled. Per client, "signal one in every N" frees slots as it should.
type worker struct {
	id     int
	ss     *session
	cq     *exutil.Completions
	out    []*responder // by client
	dirty  []int        // clients with responses queued
	signal int
	counts workerCounts
	key    [keySize]byte
	pace   spin.Pacer
	ready  []int // requests found by a scan, by index in the worker's part
	// bell wakes the worker in event mode; nil in poll mode, and on a
	// device without immediate data (iWARP), whose workers nap instead.
	bell *bell
}

// responder is a worker's send queue to one client.
type responder struct {
	jfs *jetty.JFS
	to  *jetty.Remote
	b   batch
	// open is the queued SEND that gathers this scan's responses, nil
	// when the next response starts a new one.
	open  *jetty.WR
	sends int
	dirty bool // listed in worker.dirty
}

// workerCounts are what workers served, and in event mode how often they
// slept on their bell's JFCE and how many rings they took.
type workerCounts struct{ gets, puts, bad, sleeps, rings uint64 }

func (c *workerCounts) add(o workerCounts) {
	c.gets += o.gets
	c.puts += o.puts
	c.bad += o.bad
	c.sleeps += o.sleeps
	c.rings += o.rings
}

func (c *workerCounts) served() uint64 { return c.gets + c.puts + c.bad }

// stats returns w's counts, rings included.
func (w *worker) stats() workerCounts {
	c := w.counts
	if w.bell != nil {
		c.rings = w.bell.rung
	}
	return c
}

func newWorker(ss *session, id int, clients *bootstrap.Bundle) (*worker, error) {
	srv := ss.srv
	depth := queueDepth(srv.ctx, ss.window, srv.cfg.signal)
	w := &worker{id: id, ss: ss, signal: max(1, min(srv.cfg.signal, depth/2))}
	jfcDepth := ss.clients * depth
	if m := srv.ctx.Device().Attr().MaxJFCDepth; m > 0 {
		// Only signaled records arrive, at most depth/signal+1 per queue.
		jfcDepth = min(jfcDepth, m)
	}
	var err error
	if w.cq, err = exutil.NewCompletions(srv.ctx, jfcDepth, srv.cfg.Event()); err != nil {
		return w, err
	}
	if srv.cfg.Event() && srv.ctx.Device().Attr().ImmData {
		if w.bell, err = newBell(srv.ctx, ss.clients*ss.window); err != nil {
			return w, fmt.Errorf("worker %d: doorbell: %w", id, err)
		}
	}
	// A SEND gathers up to this many responses, as many as the
	// client's buffers hold if the device allows that many SGEs.
	gather := min(gatherFor(ss.window), srv.ctx.Device().Attr().MaxJFSSGE)
	for i := range ss.clients {
		r := &responder{b: newBatch(min(ss.window, 32), gather)}
		w.out = append(w.out, r)
		if r.jfs, err = jetty.NewJFS(srv.ctx, jetty.JFSConfig{Depth: depth, Mode: urma.RM, MaxSGE: gather, JFC: w.cq.JFC}); err != nil {
			return w, err
		}
		if r.to, err = clients.Import(context.Background(), srv.ctx, clientName(i)); err != nil {
			return w, fmt.Errorf("import the JFR of client %d: %w", i, err)
		}
		if err := r.jfs.Advise(context.Background(), r.to); err != nil {
			return w, fmt.Errorf("advise the JFR of client %d: %w", i, err)
		}
	}
	return w, nil
}

func (w *worker) close() error {
	if w == nil {
		return nil
	}
	var errs []error
	for _, r := range w.out {
		errs = append(errs, r.to.Unimport())
	}
	for _, r := range w.out {
		errs = append(errs, r.jfs.Close())
	}
	return errors.Join(append(errs, w.bell.close(), w.cq.Close())...)
}

// How a worker waits. Busy or idle, it yields to the scheduler by the
// clock (package spin: a loop that only reads memory must let the
// scheduler in) and checks ctx when it does. In event mode, once idle for
// -spin (checked every idleRounds empty scans; at the first one with -spin
// 0), it arms its bell, scans once more and, if that scan finds nothing
// either, sleeps on the bell's JFCE until a ring: a request that landed
// before the arm is found by that scan, one that lands after it rings an
// armed JFC. Without a bell (a device without immediate data) it naps
// between scans instead; a nap may last much longer than it asks for (the
// runtime's timer resolution), so idleSleep is a floor, not a period.
const (
	idleRounds = 64
	idleSleep  = 50 * time.Microsecond
)

// run serves requests until ctx is done.
func (w *worker) run(ctx context.Context) error {
	ss := w.ss
	mem := ss.region.Bytes()
	per := ss.clients * ss.window
	first := w.id * per
	idle := 0
	var idleSince time.Time
	for {
		// Rings are taken at every scan, so that their receives are
		// back before the clients run out of them (see bellDepth).
		if w.bell != nil {
			if _, err := w.bell.drain(); err != nil {
				return fmt.Errorf("worker %d: %w", w.id, err)
			}
		}
		// Two passes, as HERD does: find the waiting requests and ask
		// for the table line of each one's key, then serve them. The
		// lines are likely cache misses, and asked for together they
		// arrive together.
		ready := w.ready[:0]
		for i := range per {
			idx := first + i
			// The opcode is the last byte of the slot and of this
			// aligned word; loading the word atomically orders the
			// reads of the request after it.
			word := (*uint32)(unsafe.Pointer(&mem[(idx+1)*ss.slot-4]))
			v := atomic.LoadUint32(word)
			if (*[4]byte)(unsafe.Pointer(&v))[3] == 0 {
				continue
			}
			ready = append(ready, i)
			end := (idx+1)*ss.slot - 1
			ss.srv.table.prefetch((*[keySize]byte)(mem[end-keySize : end]))
		}
		w.ready = ready
		found := len(ready) > 0
		for _, i := range ready {
			idx := first + i
			word := (*uint32)(unsafe.Pointer(&mem[(idx+1)*ss.slot-4]))
			resp := w.execute(mem[idx*ss.slot:(idx+1)*ss.slot], idx, i%ss.window)
			// Consumed: cleared before the response goes out, since
			// the response lets the client write the slot again.
			atomic.StoreUint32(word, 0)
			if err := w.respond(ctx, i/ss.window, idx, resp); err != nil {
				return err
			}
		}
		for _, c := range w.dirty {
			w.out[c].dirty = false
			if err := w.flush(ctx, c); err != nil {
				return err
			}
		}
		w.dirty = w.dirty[:0]
		if w.pace.Tick() && ctx.Err() != nil {
			return nil
		}
		if found {
			idle = 0
			if w.bell != nil {
				// The JFC stays armed; its event, if one comes,
				// ends a later sleep at once, and that wait
				// scans again.
				w.bell.armed = false
			}
			continue
		}
		idle++
		if !ss.srv.cfg.Event() {
			continue
		}
		if w.bell != nil && w.bell.armed {
			// This scan ran after the arm and found nothing.
			w.counts.sleeps++
			if err := w.bell.sleep(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("worker %d: %w", w.id, err)
			}
			continue
		}
		if !w.idleFor(idle, &idleSince) {
			continue
		}
		if w.bell != nil {
			if _, err := w.bell.arm(); err != nil {
				return fmt.Errorf("worker %d: %w", w.id, err)
			}
			continue
		}
		time.Sleep(idleSleep)
		if ctx.Err() != nil {
			return nil
		}
	}
}

// idleFor reports whether a worker whose last idle scans found nothing
// has been idle for -spin; since is when it started counting.
func (w *worker) idleFor(idle int, since *time.Time) bool {
	spinFor := w.ss.srv.cfg.spin
	switch {
	case spinFor == 0:
		return true
	case idle%idleRounds != 0:
		return false
	case idle == idleRounds:
		*since = time.Now()
		return false
	}
	return time.Since(*since) >= spinFor
}

// execute runs the request in slot and writes the response into response
// buffer idx; it returns the response's length.
func (w *worker) execute(slot []byte, idx, window int) int {
	ss := w.ss
	buf := ss.resps.Bytes()[idx*ss.resp : (idx+1)*ss.resp]
	r, err := parseRequest(slot)
	var n int
	switch {
	case err != nil:
		w.counts.bad++
		n, _ = putResponse(buf, stBadRequest, window, nil)
	case r.op == opGet:
		w.counts.gets++
		copy(w.key[:], r.key)
		vlen, st := ss.srv.table.get(&w.key, buf[respHeader:])
		n, _ = putResponse(buf, st, window, buf[respHeader:respHeader+vlen])
	default:
		w.counts.puts++
		copy(w.key[:], r.key)
		ss.srv.table.put(&w.key, r.value)
		n, _ = putResponse(buf, stOK, window, nil)
	}
	return n
}

// respond adds response buffer idx (n bytes) to the SEND gathering
// client c's responses, starting a SEND when there is none or it is full,
// and signaling one SEND in every w.signal. A full batch is posted.
func (w *worker) respond(ctx context.Context, c, idx, n int) error {
	r := w.out[c]
	if !r.dirty {
		r.dirty = true
		w.dirty = append(w.dirty, c)
	}
	if r.open == nil || len(r.open.Local) == cap(r.open.Local) {
		if r.b.full() {
			if err := w.flush(ctx, c); err != nil {
				return err
			}
		}
		var flags jetty.Flags
		if r.sends++; r.sends%w.signal == 0 {
			flags = jetty.Signaled
		}
		wr, local := r.b.next()
		wr.Opcode, wr.Flags, wr.To, wr.UserCtx = urma.OpSend, flags, r.to, uint64(idx)
		wr.Local = local
		r.open = wr
	}
	r.open.Local = append(r.open.Local, w.ss.resps.SGE(uint64(idx*w.ss.resp), uint32(n)))
	return nil
}

// flush posts client c's queued responses, waiting for send completions
// while its queue is full. Completions are otherwise left in the JFC: only
// a full queue needs them (HERD polls send completions rarely).
func (w *worker) flush(ctx context.Context, c int) error {
	r := w.out[c]
	r.open = nil // a request left queued moves in the batch
	for {
		full, err := r.b.post(r.jfs)
		if err != nil {
			return fmt.Errorf("worker %d: %w", w.id, w.cq.Explain(err))
		}
		if !full {
			return nil
		}
		if _, err := w.cq.Next(ctx, waitLimit); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("worker %d: %w", w.id, err)
		}
	}
}
