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
// ends. A failed record is an error.
func (e *endpoint) poll(ctx context.Context, j *jetty.JFC) (int, error) {
	n, err := j.PollWait(ctx, e.crs, e.cfg.Spin)
	if err != nil {
		if ctx.Err() != nil {
			return 0, errStopped
		}
		return 0, err
	}
	return n, failedCR(e.crs[:n])
}

// postAfter is poll, then a post of pr, in one call: the poll that finds
// the records posts pr (jetty.Prepared.PostAfter). The records are
// counted in n even when the post fails.
func (e *endpoint) postAfter(ctx context.Context, pr *jetty.Prepared, j *jetty.JFC) (int, error) {
	n, err := pr.PostAfter(ctx, j, e.crs, e.cfg.Spin)
	if err != nil && ctx.Err() != nil {
		return n, errStopped
	}
	if ferr := failedCR(e.crs[:n]); ferr != nil {
		return n, ferr
	}
	return n, err
}

// failedCR is the error of the first failed record of crs.
func failedCR(crs []jetty.CR) error {
	for i := range crs {
		if cr := &crs[i]; !cr.OK() {
			return fmt.Errorf("completion of %v: %w", cr.Opcode, cr.Err())
		}
	}
	return nil
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

// recvCRs splits the records in e.crs[:n] into receives and send-side
// records.
func recvCRs(crs []jetty.CR) (recv, send int) {
	for i := range crs {
		if crs[i].Flags&jetty.CRRecv != 0 {
			recv++
		} else {
			send++
		}
	}
	return recv, send
}
