package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// waitLimit bounds one wait for a completion: a peer that stopped
// answering is an error, not a hang. Ctrl-C ends waits sooner.
const waitLimit = 30 * time.Second

// batch is a send queue's requests waiting to be posted together. Each
// request's local SGE lives in sges at the same index, so that building a
// request allocates nothing.
type batch struct {
	wrs  []jetty.WR
	sges [][1]jetty.SGE
	n    int
}

func newBatch(size int) batch {
	return batch{wrs: make([]jetty.WR, size), sges: make([][1]jetty.SGE, size)}
}

func (b *batch) full() bool { return b.n == len(b.wrs) }

// next queues a zeroed request for the caller to fill in place (a
// jetty.WR built elsewhere and copied in is copied through temporaries).
// For a request with a local SGE, local returns the SGE's slot.
func (b *batch) next() (w *jetty.WR, local *[1]jetty.SGE) {
	w, local = &b.wrs[b.n], &b.sges[b.n]
	*w = jetty.WR{}
	b.n++
	return w, local
}

// post posts the queued requests. A full send queue is not an error: the
// requests it did not take move to the front and stay queued, and the
// caller polls a completion before posting again.
func (b *batch) post(q *jetty.JFS) (full bool, err error) {
	if b.n == 0 {
		return false, nil
	}
	if err = q.Post(b.wrs[:b.n]); err == nil {
		b.n = 0
		return false, nil
	}
	// Declared here, not above: errors.As takes its address, which
	// would put it on the heap on every post.
	var pe *jetty.PostError
	if !errors.As(err, &pe) || !errors.Is(err, urma.ErrAgain) {
		return false, err
	}
	left := copy(b.wrs, b.wrs[pe.Index:b.n])
	copy(b.sges, b.sges[pe.Index:b.n])
	for i := range left {
		if b.wrs[i].Flags&jetty.Inline == 0 {
			b.wrs[i].Local = b.sges[i][:]
		}
	}
	b.n = left
	return true, nil
}

// queueDepth is a send queue's depth for up to outstanding requests in
// flight and signal more: unsignaled requests hold their slots until a
// later signaled one's completion is polled. It stays within the device's
// limit; callers signal more often if that is too small.
func queueDepth(ctx *urma.Context, outstanding, signal int) int {
	d := min(outstanding+2*signal, 1<<15)
	if m := ctx.Device().Attr().MaxJFSDepth; m > 0 {
		d = min(d, m)
	}
	return d
}

// explain adds the cause to a refused post: after a failed request its
// queue is in ERROR, and the failed request's record says why.
func explain(cq *exutil.Completions, err error) error {
	crs := make([]jetty.CR, 16)
	n, _ := cq.JFC.Poll(crs)
	for _, cr := range crs[:n] {
		if !cr.OK() {
			return fmt.Errorf("%v failed (then: %w)", cr, err)
		}
	}
	return err
}
