package perf

import (
	"context"
	"errors"
	"fmt"

	"github.com/urma-go/sdk/internal/memflag"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/spin"
)

// errStopped ends a server loop: the client said it is done.
var errStopped = errors.New("stopped")

// poll returns the number of records of j in e.crs, waiting for at least
// one with JFC.PollWait: spinning, or in event mode spinning for cfg.Spin
// and then sleeping on the JFCE. It gives up with errStopped when ctx
// ends. The records may have failed: see tally.
func (e *endpoint) poll(ctx context.Context, j *jetty.JFC) (int, error) {
	n, err := j.PollWait(ctx, e.crs, e.cfg.Spin)
	if err != nil && ctx.Err() != nil {
		return 0, errStopped
	}
	return n, err
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

// failedCR is the error of the failed record cr.
func failedCR(cr *jetty.CR) error {
	return fmt.Errorf("completion of %v: %w", cr.WROpcode, cr.Err())
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
