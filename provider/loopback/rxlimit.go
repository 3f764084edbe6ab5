package loopback

import (
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/asyncq"
	"github.com/urma-go/sdk/provider/internal/qcheck"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
)

// metaRxLimit is the receive ring's meta word holding the armed receive
// threshold, 0 when none is armed. It shares the state word's line, which
// every delivery reads already, and a sender in any process that takes
// the posted receives below it disarms it (see noteTaken).
const metaRxLimit = 1

// rxLimit says whom a receive queue's threshold event goes to: the JFR's
// source with EventJFRLimit, or the Jetty's with EventJettyLimit.
type rxLimit struct {
	ev  provider.EventType
	src *asyncq.Source
}

// noteTaken checks the receive threshold after a message took one or more
// receives of the queue: while none is armed, one load of a line the
// delivery has read. Inlined on every delivery path.
func (v *rqView) noteTaken() {
	if v.rxLimit.Load() != 0 {
		v.limitSlow()
	}
}

// limitSlow fires the armed threshold once fewer receives than it are
// posted: the disarm is a compare-and-swap, so that of several senders
// that see the queue below, one tells the owner. A sender of another
// process tells it over the control connection.
func (v *rqView) limitSlow() {
	lim := v.rxLimit
	n := lim.Load()
	if n == 0 || v.ring.Len() >= int(n) || !lim.CompareAndSwap(n, 0) {
		return
	}
	if v.local != nil {
		v.local.limitReached()
	} else if v.peer != nil {
		v.peer.notifyLimit(v.id)
	}
}

// limitReached raises the queue's threshold event. A peer's report that
// repeats itself holds one place in the event queue (RaiseOnce).
func (q *recvq) limitReached() {
	if q.closed.Load() || q.limit.src == nil {
		return
	}
	q.ctx.events.RaiseOnce(q.limit.ev, q.limit.src, 0)
}

// setRxThreshold arms (n > 0) or disarms (0) the threshold.
func (q *recvq) setRxThreshold(n int) error {
	if q.closed.Load() {
		return errClosed("jfr")
	}
	if err := qcheck.RxThreshold(n, q.depth, &queueLimits, DeviceName); err != nil {
		return err
	}
	q.ring.Meta(metaRxLimit).Store(uint32(n))
	return nil
}

func (j *jfrObj) SetRxThreshold(n int) error { return j.setRxThreshold(n) }

func (j *jettyObj) SetRxThreshold(n int) error {
	if j.closed.Load() {
		return errClosed("jetty")
	}
	if j.shared != nil {
		return provider.Errorf(provider.ErrInvalid, "the jetty receives from a shared jfr: set the jfr's threshold")
	}
	return j.rq.setRxThreshold(n)
}

// notifyLimit tells the owner that a message took the posted receives of
// its queue id below the queue's threshold. It is called from the data
// path, so it does not wait for an answer (there is none).
func (p *peerConn) notifyLimit(id uint32) {
	go func() {
		select {
		case p.rpcTurn <- struct{}{}:
		case <-p.done:
			return
		}
		defer func() { <-p.rpcTurn }()
		_ = wire.Write(p.conn, wire.Message{Type: wire.NotifyLimit, Payload: (&wire.Buf{}).U32(id).Bytes})
	}()
}

// notifyLimit handles a peer's report that its message took one of our
// receive queues below the threshold. Only a peer that imported the queue
// may report; the event of a queue not yet taken by the application is
// not raised again, so a peer that repeats itself costs nothing.
func (s *ctlServer) notifyLimit(cc *ctlConn, payload []byte) {
	w := wire.Buf{Bytes: payload}
	id := w.GetU32()
	if w.Short {
		return
	}
	if _, ok := cc.rqs[id]; !ok {
		if s.refused.allow() {
			provider.Logf(provider.LogWarning, "loopback: %s ignored pid %d's report on receive queue %d, which it did not import", s.path, cc.pid, id)
		}
		return
	}
	s.c.mu.Lock()
	ep := s.c.recvqs[id]
	s.c.mu.Unlock()
	if ep != nil {
		ep.rq.limitReached()
	}
}
