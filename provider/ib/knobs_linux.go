//go:build cgo && urma_verbs

package ib

import (
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
	"github.com/urma-go/sdk/provider/internal/qcheck"
)

// setAckTimeout gives the QP of a connection the queue's err_timeout as
// its local ACK timeout, before rdma_cm moves it to RTS: the requester
// then retransmits after 4.096us*2^code without an answer, and fails the
// request once its retries are spent. Verbs' code 0 waits forever, so
// err_timeout 0 becomes code 1.
func (q *sendq) setAckTimeout(id verbs.CMID) error {
	if q.errTimeout == 0 {
		return nil
	}
	code := max(q.errTimeout-1, 1)
	if err := id.SetAckTimeout(code); err != nil {
		return verbsErr("set ack timeout", err)
	}
	return nil
}

// SetRxThreshold arms the SRQ limit (see provider.RxThresholder).
func (j *jfr) SetRxThreshold(n int) error {
	if j.closed.Load() {
		return errClosed("jfr")
	}
	if err := qcheck.RxThreshold(n, j.depth, &j.ctx.dev.attr, j.ctx.dev.info.Name); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.srq.SetLimit(n); err != nil {
		return verbsErr("set srq limit", err)
	}
	j.rxLimit.Store(int32(n))
	return nil
}

// SetRxThreshold arms the limit of the Jetty's own SRQ.
func (j *jetty) SetRxThreshold(n int) error {
	if j.closed.Load() {
		return errClosed("jetty")
	}
	if j.sharedRQ {
		return provider.Errorf(provider.ErrInvalid, "the jetty receives from a shared jfr: set the jfr's threshold")
	}
	return j.rq.SetRxThreshold(n)
}

// limitReached raises the threshold event of an SRQ limit event: the JFR's
// EventJFRLimit, or a Jetty's EventJettyLimit on the Jetty's own source.
// The device disarmed the limit.
func (j *jfr) limitReached() {
	j.rxLimit.Store(0)
	if j.jetty != nil {
		j.ctx.events.Raise(provider.EventJettyLimit, &j.jetty.sq.src, 0)
		return
	}
	j.ctx.events.Raise(provider.EventJFRLimit, &j.src, 0)
}

// rearmLimit gives a new SRQ (flushSRQ) the threshold still armed on the
// one it replaces.
func (j *jfr) rearmLimit(srq *verbs.SRQ) error {
	if n := j.rxLimit.Load(); n > 0 {
		if err := srq.SetLimit(int(n)); err != nil {
			return verbsErr("set srq limit", err)
		}
	}
	return nil
}
