package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// A worker's doorbell in event mode. Requests are WRITEs, which raise no
// completion at the server, so a worker could only nap between scans; with
// a doorbell it sleeps on a JFCE instead. The last request of each client
// post to a worker is a WRITE_IMM (its data lands in its slot like any
// other request's) whose immediate consumes a receive of the worker's bell
// JFR, and the record that raises the JFC's event. A queue's requests
// execute in order, so the ring of a post comes after the data of every
// request of that post to the worker: a worker that arms its bell's JFC,
// then scans its slots once more and then sleeps either finds a request or
// is woken by its ring. Every post rings, busy or not: a client cannot
// tell a sleeping worker from a busy one without a round trip (a flag the
// worker sets before it sleeps can be read by the client before its own
// request has landed, and both then miss each other), and a ring costs the
// client one WRITE_IMM in place of a WRITE.
//
// The immediate is the slot index of the request in the worker's part;
// the worker scans every slot either way, so it only checks it.
type bell struct {
	cq    *exutil.Completions // with a JFCE
	jfr   *jetty.JFR
	token uint32
	recvs *jetty.PreparedRecv // bellRepost receives without buffers
	crs   []jetty.CR
	slots int // the worker's slots, the bound of a valid immediate
	// rung counts the records drained, armed whether the JFC asks for
	// an event: the next record after an arm raises one.
	rung  uint64
	armed bool
}

// bellRepost is how many receives a drain reposts at once: one poll's
// worth.
const bellRepost = 16

// bellName names worker i's bell JFR in the server's bundle.
func bellName(i int) string { return "bell" + strconv.Itoa(i) }

// bellDepth is the depth of the bell JFR of a worker with slots slots. A
// worker drains its bell at every scan and reposts each receive as soon as
// it takes the record, and a ring lands after its request: between two
// drains a slot sees at most three rings, one whose request the scan before
// answered (its ring landed after that drain), one answered by this scan,
// and one whose request waits for the next scan. A device whose JFRs are
// shallower makes rings wait for receives (RNR) under load.
func bellDepth(uctx *urma.Context, slots int) int {
	d := 3 * slots
	if m := uctx.Device().Attr().MaxJFRDepth; m > 0 {
		d = min(d, m)
	}
	return d
}

// newBell makes a worker's bell: a JFC with a JFCE, a JFR whose receives
// have no buffers (a WRITE_IMM moves no data into them), all posted.
func newBell(uctx *urma.Context, slots int) (b *bell, err error) {
	depth := bellDepth(uctx, slots)
	b = &bell{crs: make([]jetty.CR, bellRepost), slots: slots, token: rand.Uint32() | 1}
	defer func() {
		if err != nil {
			err = errors.Join(err, b.close())
		}
	}()
	if b.cq, err = exutil.NewCompletions(uctx, depth, true); err != nil {
		return b, err
	}
	if b.jfr, err = jetty.NewJFR(uctx, jetty.JFRConfig{Depth: depth, Mode: urma.RM, JFC: b.cq.JFC,
		TokenPolicy: segment.TokenPlainText, Token: b.token}); err != nil {
		return b, err
	}
	if b.recvs, err = b.jfr.PrepareRecv(make([]jetty.RecvWR, bellRepost)); err != nil {
		return b, err
	}
	for posted := 0; posted < depth; posted += bellRepost {
		if err := b.recvs.PostFirst(min(bellRepost, depth-posted)); err != nil {
			return b, err
		}
	}
	return b, nil
}

// close frees the bell. Nil-safe.
func (b *bell) close() error {
	if b == nil {
		return nil
	}
	return errors.Join(b.jfr.Close(), b.cq.Close())
}

// drain takes every record of the bell's JFC, reposts their receives and
// reports whether there were any. Nil-safe: no bell, no rings.
func (b *bell) drain() (bool, error) {
	if b == nil {
		return false, nil
	}
	rang := false
	for {
		n, err := b.cq.JFC.Poll(b.crs)
		if err != nil {
			return rang, err
		}
		if n == 0 {
			return rang, nil
		}
		for i := range n {
			cr := &b.crs[i]
			if !cr.OK() || cr.Flags&jetty.CRImm == 0 || cr.Imm >= uint64(b.slots) {
				return rang, fmt.Errorf("unexpected doorbell %v", cr)
			}
		}
		if err := b.recvs.PostFirst(n); err != nil {
			return rang, err
		}
		b.rung += uint64(n)
		rang = true
	}
}

// arm asks for an event at the next ring. It reports false when records
// came first: they are a ring, and the caller scans again instead.
func (b *bell) arm() (bool, error) {
	if rang, err := b.drain(); rang || err != nil {
		return false, err
	}
	// Rearm refuses while records are unread: a ring that landed after
	// the drain.
	if err := b.cq.JFC.Rearm(false); errors.Is(err, urma.ErrAgain) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	b.armed = true
	return true, nil
}

// sleep waits for the event an arm asked for, or ctx's end.
func (b *bell) sleep(ctx context.Context) error {
	b.armed = false
	return b.cq.JFC.Wait(ctx)
}
