package perf

import (
	"context"
	"errors"
	"time"

	"github.com/urma-go/sdk/internal/memflag"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/spin"
	"github.com/urma-go/sdk/urma"
)

// errStopped ends a server loop: the client said it is done.
var errStopped = errors.New("stopped")

// poll returns the number of records of j in e.crs, waiting for at least
// one: spinning, or in event mode spinning for cfg.Spin and then sleeping
// on the JFCE. A tuned run waits in JFC.PollWait, the default loops as the
// jetty package documents it (pollPlain). It gives up with errStopped when
// ctx ends. The records may have failed: see tally.
func (e *endpoint) poll(ctx context.Context, j *jetty.JFC) (int, error) {
	if !e.cfg.Tuned {
		return e.pollPlain(ctx, j)
	}
	n, err := j.PollWait(ctx, e.crs, e.cfg.Spin)
	if err != nil && ctx.Err() != nil {
		return 0, errStopped
	}
	return n, err
}

// pollPlain is poll written with the ordinary API: JFC.Poll until a record
// comes; in event mode, once cfg.Spin has passed with none, Rearm and
// JFC.Wait for the JFCE's event, then poll again. Rearm refuses
// (urma.ErrAgain) while records are unread, so a record that came between
// the last poll and the arming is polled, never slept through. The busy
// loop gives the core away now and then (spin.Wait) and yields to Go's
// scheduler by the clock (spin.Pacer), which is also when it notices ctx.
func (e *endpoint) pollPlain(ctx context.Context, j *jetty.JFC) (int, error) {
	var wait spin.Wait
	var since time.Duration
	spinning := false
	for {
		n, err := j.Poll(e.crs)
		if n > 0 || err != nil {
			return n, err
		}
		if e.cfg.Event {
			now := spin.Now()
			if !spinning {
				since, spinning = now, true
			}
			if now-since >= e.cfg.Spin {
				if err := e.sleep(ctx, j); err != nil {
					return 0, err
				}
				spinning = false
				continue
			}
		}
		wait.Idle()
		if e.pace.Tick() && ctx.Err() != nil {
			return 0, errStopped
		}
	}
}

// sleep arms j and waits for its event on the JFCE; it returns at once,
// with nil, when records are already there to poll.
func (e *endpoint) sleep(ctx context.Context, j *jetty.JFC) error {
	if err := j.Rearm(false); err != nil {
		if errors.Is(err, urma.ErrAgain) {
			return nil
		}
		return err
	}
	if err := j.Wait(ctx); err != nil {
		if ctx.Err() != nil {
			return errStopped
		}
		return err
	}
	return nil
}

// tally counts the receives among crs and finds the first failed record
// (bad, -1 when none), in one pass: the latency loops read each record
// once between the poll that finds it and the next post.
func tally(crs []jetty.CR) (recv, bad int) {
	bad = -1
	for i := range crs {
		cr := &crs[i]
		if !cr.OK() && bad < 0 {
			bad = i
		}
		if cr.Flags&jetty.CRRecv != 0 {
			recv++
		}
	}
	return recv, bad
}

// failedCR is the error of the failed record cr: a *jetty.CRError, whose
// text names the request's opcode and the status.
func failedCR(cr *jetty.CR) error { return cr.Err() }

// failedRecord polls this side's JFCs for the records nobody polled yet
// and returns the error of the first failed one, or nil. Only a run that
// has failed calls it: the records it takes are not counted.
func (e *endpoint) failedRecord() error {
	for _, j := range []*jetty.JFC{e.jfc, e.rjfc} {
		if j == nil || (j == e.rjfc && e.rjfc == e.jfc) {
			continue
		}
		for {
			n, err := j.Poll(e.crs)
			if err != nil || n == 0 {
				break
			}
			if _, bad := tally(e.crs[:n]); bad >= 0 {
				return failedCR(&e.crs[bad])
			}
		}
	}
	return nil
}

// explain returns the cause of err, a post refused because its queue is
// in ERROR: a queue goes there when one of its requests fails, and that
// request's record, not the refusal after it, says why (ACK_TIMEOUT_ERR
// from a peer that is gone). Any other error, or a refusal with no failed
// record (an RC jetty whose peer vanished goes to ERROR without one), is
// returned as it is.
func (e *endpoint) explain(err error) error {
	if !errors.Is(err, urma.ErrBadState) {
		return err
	}
	if cause := e.failedRecord(); cause != nil {
		return cause
	}
	return err
}

// awaitLast spins until the last byte of b, which the peer WRITEs, is v,
// or ctx ends; a long wait gives the core away now and then (spin.Wait),
// for a peer that shares it.
func awaitLast(ctx context.Context, b []byte, v byte, p *spin.Pacer) error {
	f := memflag.At(&b[len(b)-1])
	var wait spin.Wait
	for f.Load() != v {
		wait.Idle()
		if p.Tick() && ctx.Err() != nil {
			return errStopped
		}
	}
	return nil
}

// marker is the byte that tells iteration i's data has arrived: never 0
// (the regions start zeroed) and never the previous one.
func marker(i int) byte { return byte(i%255) + 1 }
