package main

import (
	"errors"
	"time"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// waitLimit bounds one wait for a completion: a peer that stopped
// answering is an error, not a hang. Ctrl-C ends waits sooner.
const waitLimit = 30 * time.Second

// batch is a send queue's requests waiting to be posted together. Request
// i's local SGEs live in sges[i*gather:(i+1)*gather], so that building a
// request allocates nothing.
type batch struct {
	wrs    []jetty.WR
	sges   []segment.SGE
	gather int
	n      int
	// pe receives a full queue's *PostError: errors.As takes its
	// address, which for a local variable would be a heap allocation at
	// every refusal, and a full queue refuses all the time.
	pe *jetty.PostError
}

// newBatch makes a batch of up to size requests of up to gather local
// SGEs each.
func newBatch(size, gather int) batch {
	return batch{wrs: make([]jetty.WR, size), sges: make([]segment.SGE, size*gather), gather: gather}
}

func (b *batch) full() bool { return b.n == len(b.wrs) }

// next queues a zeroed request for the caller to fill in place (a
// jetty.WR built elsewhere and copied in is copied through temporaries).
// local is the request's room for local SGEs: empty, with a capacity of
// gather.
func (b *batch) next() (w *jetty.WR, local []segment.SGE) {
	w, local = &b.wrs[b.n], b.local(b.n)
	*w = jetty.WR{}
	b.n++
	return w, local
}

func (b *batch) local(i int) []segment.SGE {
	return b.sges[i*b.gather : i*b.gather : (i+1)*b.gather]
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
	if !errors.Is(err, urma.ErrAgain) || !errors.As(err, &b.pe) {
		return false, err
	}
	left := copy(b.wrs, b.wrs[b.pe.Index:b.n])
	b.pe = nil
	for i := range left {
		if b.wrs[i].Flags&jetty.Inline == 0 {
			// The SGEs move with their request, into its new room.
			n := copy(b.local(i)[:len(b.wrs[i].Local)], b.wrs[i].Local)
			b.wrs[i].Local = b.local(i)[:n]
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
