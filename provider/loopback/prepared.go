package loopback

import (
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/urma-go/sdk/internal/prefetch"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/inbox"
	"github.com/urma-go/sdk/provider/loopback/internal/sg"
)

// prepared is a request checked once (provider.Prepared). When fast is set,
// its local memory is resolved too, and a Post that finds the queue, the
// target and the memory as they were at Prepare runs it without checking
// its shape again or looking anything up: only the checks whose answer can
// change since (states, closed flags, the queue's room) run each time. Any
// of them failing sends the Post through the queue's own Post, which
// reports the failure as it would for any request.
type prepared struct {
	q   *sendq
	wr  [1]provider.WR
	sge [maxSGE]provider.SGE

	fast bool
	rem  *remote
	// seg and local are the local segment and the range of it the
	// request names (nil seg: local is the caller's inline bytes).
	seg   *segment
	local []byte
	// tgt and remote are, for a WRITE, a READ or an atomic, the target
	// segment and the range of it the request reaches (nil tgt: the
	// request resolves its target at each post).
	tgt    *target
	remote []byte
	// send is set for a SEND or SEND_IMM that may take sendPrepared's
	// short way, and sw then names the sender in its receive records;
	// small for such a SEND whose data fits an inbox entry, which then
	// takes cells cells, with the header word hdr but for its route
	// (postInboxPrepared).
	send, small bool
	sw          inbox.Sender
	cells       uint64
	hdr         uint64
}

// Prepare implements provider.Preparer.
func (q *sendq) Prepare(w *provider.WR) (provider.Prepared, error) {
	p := &prepared{q: q}
	kept := &p.wr[0]
	*kept = *w
	if len(w.Local) <= len(p.sge) {
		kept.Local = p.sge[:copy(p.sge[:], w.Local)]
	} else {
		// More SGEs than any queue takes: the check below refuses the
		// whole list, which a copy into p.sge would have cut short.
		kept.Local = slices.Clone(w.Local)
	}
	if err := q.lockOpen(); err != nil {
		return nil, err
	}
	defer q.mu.UnlockOwner()
	rem, err := q.validate(kept)
	if err != nil {
		return nil, err
	}
	p.rem = rem
	// A jetty group's member is picked at each post, so its requests
	// take Post's way.
	if t := w.Dest(); t == nil || asRemote(t) != nil {
		p.fast = p.resolve()
	}
	return p, nil
}

// resolve finds the request's local memory and tells whether the request
// can take the fast path: one that needs a target, with its data inline or
// in one SGE of memory this process maps.
func (p *prepared) resolve() bool {
	w := &p.wr[0]
	if p.rem == nil {
		return false
	}
	switch {
	case w.InlineBytes():
		p.local = w.Inline
	case w.Flags&provider.FlagInline != 0 || len(w.Local) != 1:
		return false
	default:
		seg := asSegment(w.Local[0].Seg)
		if seg == nil || seg.ref.mem == nil || seg.ref.peer != nil || seg.ref.counted {
			return false
		}
		var s sg.Span
		if !seg.ref.span(w.Local[0].Addr, w.Local[0].Len, &s) {
			return false
		}
		p.seg, p.local = seg, s.B
	}
	p.resolveRemote()
	if w.Opcode == provider.OpSend || w.Opcode == provider.OpSendImm {
		p.send, p.small = true, len(p.local) <= inbox.MaxData
		fillSender(&p.sw, p.q)
		if p.small {
			p.cells = inbox.Cells(len(p.local))
			h := p.q.inboxHeaderOf(w, len(p.local))
			h.Route = 0 // the route the queue holds at each post
			p.hdr = h.Word()
		}
	}
	return true
}

// resolveRemote finds the remote range of a WRITE, a READ or an atomic on
// mapped memory the target grants it; others leave it to each post, which
// also reports the failure of one it does not grant.
func (p *prepared) resolveRemote() {
	w := &p.wr[0]
	var need provider.Access
	n := uint32(len(p.local))
	switch {
	case w.Opcode == provider.OpWrite:
		need = provider.AccessWrite
	case w.Opcode == provider.OpRead:
		need = provider.AccessRead
	case w.Opcode.IsAtomic():
		need, n = provider.AccessAtomic, 8
	default:
		return
	}
	t := asTarget(w.Remote.Seg)
	if t == nil || t.ref.mem == nil || t.ref.counted || t.ref.access&need != need {
		return
	}
	var s sg.Span
	if !t.ref.span(w.Remote.Addr, n, &s) {
		return
	}
	p.tgt, p.remote = t, s.B
}

// WR implements provider.Prepared.
func (p *prepared) WR() *provider.WR { return &p.wr[0] }

// Post implements provider.Prepared.
func (p *prepared) Post() (int, error) {
	q := p.q
	if !p.fast {
		return q.Post(p.wr[:])
	}
	if len(p.remote) > 0 {
		// The target's first line is asked for before the checks, for a
		// WRITE or an atomic in a state this core can write: in a
		// latency loop the peer spins on that line, and taking it over
		// is a round trip between cores, which then overlaps the checks
		// instead of waiting behind them (BenchmarkWritePingPong8 against
		// BenchmarkRawPingPong8 shows what is left). A SEND's short way
		// asks for no line early: its record's line is the one the
		// receiver polls, and asking for it early only moves it back and
		// forth. The line may be unmapped by now (an Unregister): a hint
		// never faults, and the checks below stop the access itself.
		p.prefetchRemote()
	}
	locked := !q.closed.Load() && q.mu.TryLockOwner()
	if !locked || q.closed.Load() {
		if err := q.lockOpenAfter(locked); err != nil {
			return 0, err
		}
	}
	// Unlocked here rather than deferred: a deferred call costs the fast
	// path a closure's setup and a call, and nothing under the lock
	// panics but a bug.
	n, err := p.postLocked()
	q.countOne(n, err, len(p.local))
	q.mu.UnlockOwner()
	return n, err
}

// prefetchRemote asks for the first line of the request's remote range: to
// read for a READ, to write otherwise. The request has a remote range.
func (p *prepared) prefetchRemote() {
	if p.wr[0].Opcode == provider.OpRead {
		prefetch.Read(unsafe.Pointer(&p.remote[0]))
	} else {
		prefetch.Write(unsafe.Pointer(&p.remote[0]))
	}
}

// postLocked is Post's work under the queue's lock.
func (p *prepared) postLocked() (int, error) {
	q := p.q
	// A small SEND may go to an inbox behind the queue's earlier ones;
	// anything else comes after them.
	small := p.small
	if !small && !q.clearInbox() || !p.unchanged() {
		return q.postLocked(p.wr[:])
	}
	if err := q.full(); err != nil {
		return 0, err
	}
	q.head++
	w := &p.wr[0]
	if small && q.inboxStreams(q.head, p.rem) && q.postInboxPrepared(p, q.head) {
		return 1, nil
	}
	if !q.clearInbox() {
		q.wait(w, p.rem, false)
		return 1, nil
	}
	if p.tgt != nil {
		q.execPrepared(p, q.head)
		return 1, nil
	}
	if p.send && q.sendPrepared(p, q.head) {
		return 1, nil
	}
	// The local segment's access is not counted (see resolve): its bytes
	// hold nothing to release, as inline data does not.
	l := &q.sg[0]
	l.AddBytes(p.local)
	rnr := q.execWith(w, q.head, p.rem, l)
	l.Release()
	if rnr {
		q.wait(w, p.rem, true)
	}
	return 1, nil
}

// unchanged tells whether what Prepare checked still holds and the
// request may run now: the queue ready with nothing waiting, its target
// open (and still the Jetty's binding in RC mode), its local segment
// registered. Under the queue's lock, which keeps the segment's memory
// mapped for as long as it is held (see quiesce.go).
func (p *prepared) unchanged() bool {
	q := p.q
	if q.state != provider.StateReady || len(q.pending) != 0 || p.rem.closed.Load() {
		return false
	}
	if q.mode == provider.RC && q.jetty.bound != p.rem {
		return false
	}
	if p.seg != nil && (p.seg.closed.Load() || p.seg.ref.pin() != provider.CRSuccess) {
		return false
	}
	// pin and acquire count nothing on memory a process maps (see
	// resolve): there is nothing to release.
	if p.tgt != nil && (p.tgt.closed.Load() || p.tgt.ref.acquire() != provider.CRSuccess) {
		return false
	}
	return true
}

// execPrepared runs the one-sided request p, whose memory is resolved and
// checked, and completes it: what execWith does once it has the spans.
func (q *sendq) execPrepared(p *prepared, seq uint64) {
	w, rem := &p.wr[0], p.rem
	if st := rem.rq.ready(); st != provider.CRSuccess {
		q.fail(w, seq, rem, st)
		return
	}
	var n uint64
	switch w.Opcode {
	case provider.OpWrite:
		n = sg.PlaceBytes(p.remote, p.local)
	case provider.OpRead:
		n = readBytes(p.local, p.remote)
	default:
		old := atomicOp(w, (*uint64)(unsafe.Pointer(&p.remote[0])))
		binary.NativeEndian.PutUint64(p.local, old)
		n = 8
	}
	q.complete(w, seq, rem, provider.CRSuccess, uint32(n))
}

// readBytes copies a READ's bytes from the target s into d: an 8-byte
// READ, a counter or a flag, in one move without the call to memmove, as
// sg.PlaceBytes does for a WRITE.
func readBytes(d, s []byte) uint64 {
	if len(d) == 8 && len(s) == 8 {
		binary.NativeEndian.PutUint64(d, binary.NativeEndian.Uint64(s))
		return 8
	}
	return uint64(copy(d, s))
}
