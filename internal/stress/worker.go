package stress

import (
	"encoding/binary"
	"errors"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Request kinds, in the top byte of a record's user context.
const (
	kindWrite = iota + 1
	kindRead
	kindSend
	kindFAdd
	kindCAS
	kindRecv
)

func userCtx(kind, idx int) uint64 { return uint64(kind)<<56 | uint64(idx) }
func splitCtx(u uint64) (int, int) { return int(u >> 56), int(u & (1<<56 - 1)) }

// sendQueue is what a worker posts to: a JFS, or an RC Jetty.
type sendQueue interface {
	Write(to *jetty.Remote, remote, local segment.SGE, flags jetty.Flags, userCtx uint64) error
	Read(from *jetty.Remote, remote, local segment.SGE, flags jetty.Flags, userCtx uint64) error
	Send(to *jetty.Remote, local segment.SGE, flags jetty.Flags, userCtx uint64) error
	SendImm(to *jetty.Remote, local segment.SGE, imm uint64, flags jetty.Flags, userCtx uint64) error
	CompareSwap(to *jetty.Remote, remote, result segment.SGE, compare, swap uint64, flags jetty.Flags, userCtx uint64) error
	FetchAdd(to *jetty.Remote, remote, result segment.SGE, add uint64, flags jetty.Flags, userCtx uint64) error
	Flush(crs []jetty.CR) (int, error)
	Query() (jetty.Attr, error)
}

// recvQueue is what a worker receives on: a JFR, or the same RC Jetty.
type recvQueue interface {
	Recv(buf segment.SGE, userCtx uint64) error
	Descriptor() jetty.Descriptor
}

// workerKind is what a worker of an index uses, the same on both sides:
// RM JFS and JFR, or an RC Jetty bound to the peer's; in event mode or
// busy-polling.
func workerKind(idx int) (event, rc bool) { return idx%2 == 0, idx%4 >= 2 }

// worker drives one queue set: its JFS (or Jetty) WRITEs, READs, SENDs and
// atomics into the peer's worker of the same index, and its JFR (or the
// Jetty) receives what that worker SENDs.
type worker struct {
	n      *Node
	idx    int
	event  bool
	inline int
	jfce   *jetty.JFCE
	jfc    *jetty.JFC
	jfs    *jetty.JFS
	jfr    *jetty.JFR
	jetty  *jetty.Jetty // RC workers: send and receive queue
	sq     sendQueue
	rq     recvQueue
	peer   *jetty.Remote
	to     *jetty.Remote // the peer's JFR; nil on a bound Jetty
	crs    []jetty.CR
	check  []byte

	freeSlots, freeSends []int
	slotSeq              [slots]uint64
	atomicBusy           bool
	faddNext, casNext    uint64 // the old values the next FADD and CAS must return
	writeSeq, msgSeq     uint64
	inFlight             int
	broken               bool // a request failed: the JFS is in ERROR
	stopped              bool // a post was refused: no new requests
	told                 bool // counted as drained
	rng                  uint64
	stats                Stats
}

func newWorker(n *Node, idx int, inline int) (w *worker, err error) {
	event, rc := workerKind(idx)
	w = &worker{n: n, idx: idx, event: event, inline: inline, crs: make([]jetty.CR, 32),
		check: make([]byte, slotSize), rng: uint64(idx)<<32 | uint64(n.token)}
	defer func() {
		if err != nil {
			err = errors.Join(err, w.close())
		}
	}()
	if event {
		if w.jfce, err = jetty.NewJFCE(n.ctx); err != nil {
			return w, err
		}
	}
	if w.jfc, err = jetty.NewJFC(n.ctx, jetty.JFCConfig{Depth: 4 * (slots + sendSlots + recvs), JFCE: w.jfce}); err != nil {
		return w, err
	}
	send := jetty.JFSConfig{Depth: 2 * (slots + sendSlots + 1), MaxInline: inline,
		RNRRetry: n.cfg.RNRRetry, RNRTimeout: n.cfg.RNRTimeout, JFC: w.jfc}
	recv := jetty.JFRConfig{Depth: recvs, TokenPolicy: segment.TokenPlainText, Token: n.token, JFC: w.jfc}
	if rc {
		send.Mode = urma.RC
		if w.jetty, err = jetty.NewJetty(n.ctx, jetty.JettyConfig{Send: send, Recv: recv}); err != nil {
			return w, err
		}
		w.sq, w.rq = w.jetty, w.jetty
	} else {
		if w.jfs, err = jetty.NewJFS(n.ctx, send); err != nil {
			return w, err
		}
		if w.jfr, err = jetty.NewJFR(n.ctx, recv); err != nil {
			return w, err
		}
		w.sq, w.rq = w.jfs, w.jfr
	}
	for i := range recvs {
		if err = w.rq.Recv(w.local(recvOff+i*msgSize, msgSize), userCtx(kindRecv, i)); err != nil {
			return w, err
		}
	}
	for i := range slots {
		w.freeSlots = append(w.freeSlots, i)
	}
	for i := range sendSlots {
		w.freeSends = append(w.freeSends, i)
	}
	return w, nil
}

// local and remote are SGEs at off in this worker's region of this node's
// segment and of the peer's.
func (w *worker) local(off, n int) segment.SGE {
	return w.n.seg.SGE(uint64(w.idx*regionSize+off), uint32(n))
}

func (w *worker) remote(off, n int) segment.SGE {
	return w.n.tgt.SGE(uint64(w.idx*regionSize+off), uint32(n))
}

func (w *worker) mem(off, n int) []byte {
	base := w.idx*regionSize + off
	return w.n.seg.Bytes()[base : base+n]
}

func (w *worker) rand() uint64 {
	w.rng = mix(w.rng)
	return w.rng
}

// postSome posts new requests while there is room, a few at a time so that
// completions are reaped in between.
func (w *worker) postSome() error {
	for range 4 {
		var err error
		switch r := w.rand() % 10; {
		case r < 4 && len(w.freeSlots) > 0:
			err = w.postWrite()
		case r < 8 && len(w.freeSends) > 0:
			err = w.postSend(r%2 == 0)
		case !w.atomicBusy:
			err = w.postAtomic(r%2 == 0)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *worker) postWrite() error {
	slot := w.freeSlots[len(w.freeSlots)-1]
	w.writeSeq++
	seq := w.writeSeq
	n := blockLen(w.idx, seq)
	src := slotOff(scratchOff, slot)
	fillBlock(w.mem(src, n), w.idx, seq)
	var flags jetty.Flags
	if n <= w.inline {
		flags = jetty.Inline
	}
	if w.n.cfg.Ledger {
		w.n.ledger("post", w.idx, slot, seq)
	}
	if err := w.sq.Write(w.to, w.remote(slotOff(areaOff, slot), n), w.local(src, n), flags, userCtx(kindWrite, slot)); err != nil {
		return err
	}
	w.freeSlots = w.freeSlots[:len(w.freeSlots)-1]
	w.slotSeq[slot] = seq
	w.inFlight++
	return nil
}

// postRead reads the block just written back over the scratch it came
// from, cleared first so that a READ that moved nothing cannot pass.
func (w *worker) postRead(slot int) error {
	n := blockLen(w.idx, w.slotSeq[slot])
	dst := slotOff(scratchOff, slot)
	clear(w.mem(dst, n))
	if err := w.sq.Read(w.to, w.remote(slotOff(areaOff, slot), n), w.local(dst, n), 0, userCtx(kindRead, slot)); err != nil {
		return err
	}
	w.inFlight++
	return nil
}

func (w *worker) postSend(imm bool) error {
	i := w.freeSends[len(w.freeSends)-1]
	w.msgSeq++
	n := msgHeader + int(w.rand()%(msgSize-msgHeader+1))
	off := sendOff + i*msgSize
	fillMsg(w.mem(off, n), n, w.msgSeq)
	var flags jetty.Flags
	if n <= w.inline {
		flags = jetty.Inline
	}
	var err error
	if imm {
		err = w.sq.SendImm(w.to, w.local(off, n), w.msgSeq, flags, userCtx(kindSend, i))
	} else {
		err = w.sq.Send(w.to, w.local(off, n), flags, userCtx(kindSend, i))
	}
	if err != nil {
		return err
	}
	w.freeSends = w.freeSends[:len(w.freeSends)-1]
	w.inFlight++
	return nil
}

// postAtomic runs one FADD or CAS at a time: each returns the old value,
// which this worker alone changes, so every result is known in advance.
func (w *worker) postAtomic(cas bool) error {
	add := w.rand()%1000 + 1
	res := w.local(resultOff, 8)
	var err error
	if cas {
		err = w.sq.CompareSwap(w.to, w.remote(atomicOff+8, 8), res, w.casNext, w.casNext+add, 0, userCtx(kindCAS, int(add)))
	} else {
		err = w.sq.FetchAdd(w.to, w.remote(atomicOff, 8), res, add, 0, userCtx(kindFAdd, int(add)))
	}
	if err != nil {
		return err
	}
	w.atomicBusy = true
	w.inFlight++
	return nil
}

func slotOff(base, slot int) int { return base + slot*slotSize }

// handle accounts for one record and posts what follows from it. It
// handles every record it is given: a refused follow-up post is counted
// and ends the run, it does not drop the records after it.
func (w *worker) handle(cr *jetty.CR, running bool) {
	kind, idx := splitCtx(cr.UserCtx)
	if kind == kindRecv {
		w.received(cr, idx)
		return
	}
	w.inFlight--
	if !cr.OK() {
		w.stats.failed(cr.Status)
		w.broken = true
	}
	switch kind {
	case kindWrite:
		if !cr.OK() {
			w.freeSlots = append(w.freeSlots, idx)
			return
		}
		w.stats.Writes++
		if w.n.cfg.Ledger {
			w.n.ledger("done", w.idx, idx, w.slotSeq[idx])
		}
		if running && !w.stopped {
			err := w.postRead(idx)
			if err == nil {
				return
			}
			w.refuse(err)
		}
		w.freeSlots = append(w.freeSlots, idx)
	case kindRead:
		if cr.OK() {
			w.stats.Reads++
			if !blockOK(w.mem(slotOff(scratchOff, idx), slotSize), w.idx, w.slotSeq[idx], w.check) {
				w.stats.mismatch("read back a block that differs from the one written")
			}
		}
		w.freeSlots = append(w.freeSlots, idx)
	case kindSend:
		if cr.OK() {
			w.stats.Sends++
		}
		w.freeSends = append(w.freeSends, idx)
	case kindFAdd, kindCAS:
		w.atomicBusy = false
		if !cr.OK() {
			// The atomic may or may not have happened: nothing more
			// can be predicted, so no more atomics.
			w.atomicBusy = true
			return
		}
		w.stats.Atomics++
		old := binary.NativeEndian.Uint64(w.mem(resultOff, 8))
		want := &w.faddNext
		if kind == kindCAS {
			want = &w.casNext
		}
		if old != *want {
			w.stats.mismatch("an atomic returned an unexpected old value")
		}
		*want += uint64(idx)
	default:
		w.stats.mismatch("a record with an unknown user context")
	}
}

// received checks a message and posts its buffer again.
func (w *worker) received(cr *jetty.CR, buf int) {
	if !cr.OK() {
		w.stats.failed(cr.Status)
		return // flushed: the queue is going away
	}
	w.stats.Recvs++
	if buf >= recvs || !msgOK(w.mem(recvOff+buf*msgSize, msgSize), cr.Len, cr.Imm, cr.Flags&jetty.CRImm != 0) {
		w.stats.mismatch("a received message failed its checksum")
	}
	if err := w.rq.Recv(w.local(recvOff+buf*msgSize, msgSize), cr.UserCtx); err != nil {
		w.refuse(err)
	}
}

// refuse counts a refused post and ends the run: the queue is broken or
// the peer gone.
func (w *worker) refuse(err error) {
	w.stats.refused(err)
	w.stopped = true
}

func (w *worker) close() error {
	if w == nil {
		return nil
	}
	var unbind error
	if w.jetty != nil && w.peer != nil {
		unbind = w.jetty.Unbind()
	}
	return errors.Join(unbind, w.peer.Close(), w.jetty.Close(), w.jfs.Close(), w.jfr.Close(), w.jfc.Close(), w.jfce.Close())
}
