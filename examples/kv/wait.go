package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/spin"
)

// waiter takes a group's completion records from its JFC, waiting for
// them the way -mode and -spin say: in poll mode it busy-polls; in event
// mode it polls for up to spin and then parks, arming the JFC and
// sleeping on its JFCE until the next record's event (JFC.PollWait with
// no budget left), so that a response that comes within spin costs no
// wake-up and a late one no CPU. Spin 0 parks at once: pure event mode.
type waiter struct {
	jfc    *jetty.JFC
	event  bool
	spin   time.Duration
	crs    []jetty.CR
	queued []jetty.CR
	// parks counts the waits that went to the JFCE, polls the waits that
	// returned; polls is read by the stall watch of group.run.
	parks atomic.Uint64
	polls atomic.Uint64
}

func newWaiter(jfc *jetty.JFC, event bool, spinFor time.Duration) *waiter {
	return &waiter{jfc: jfc, event: event, spin: spinFor, crs: make([]jetty.CR, 16)}
}

// queuedRecords is the number of records already polled that next
// returns without polling again.
func (w *waiter) queuedRecords() int { return len(w.queued) }

// next returns the next record, in w's buffer (valid until the next
// call): a busy loop reads it in place rather than copying it out. A
// record with an error status is returned with its error. It gives up
// when ctx is done, with ctx's cause.
func (w *waiter) next(ctx context.Context) (*jetty.CR, error) {
	if len(w.queued) > 0 {
		cr := &w.queued[0]
		w.queued = w.queued[1:]
		return cr, cr.Err()
	}
	n, err := w.wait(ctx)
	w.polls.Add(1)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	w.queued = w.crs[1:n]
	return &w.crs[0], w.crs[0].Err()
}

// wait polls at least one record into w.crs.
func (w *waiter) wait(ctx context.Context) (int, error) {
	if !w.event {
		// Without a JFCE PollWait spins until a record comes, yielding
		// by the clock.
		return w.jfc.PollWait(ctx, w.crs, 0)
	}
	if w.spin > 0 {
		start := spin.Now()
		var idle spin.Wait
		for {
			if n, err := w.jfc.Poll(w.crs); n > 0 || err != nil {
				return n, err
			}
			if spin.Now()-start >= w.spin {
				break
			}
			idle.Idle()
		}
	}
	// PollWait polls once more, arms and sleeps; a record that came
	// before the arm ends it at once.
	w.parks.Add(1)
	return w.jfc.PollWait(ctx, w.crs, 0)
}

// watchStalls cancels ctx with an error once a whole waitLimit passes in
// which no wait of w returned: a server that stopped answering is an
// error, not a hang. Call the returned function to stop watching.
func (w *waiter) watchStalls(cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(waitLimit)
		defer t.Stop()
		last := w.polls.Load()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				n := w.polls.Load()
				if n == last {
					cancel(fmt.Errorf("no completion in %v", waitLimit))
					return
				}
				last = n
			}
		}
	}()
	return func() { close(done) }
}
