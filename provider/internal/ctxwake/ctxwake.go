// Package ctxwake wakes a blocking provider call when its context ends,
// without an allocation per call: a loop that waits again and again with
// one context registers with it once.
package ctxwake

import (
	"context"
	"sync"
)

// Watch calls Wake when the context of the latest On ends. Set Wake once,
// before the first On: a method value made at each call would be an
// allocation per wait.
type Watch struct {
	Wake func()
	mu   sync.Mutex
	ctx  context.Context
	stop func() bool
}

// On makes Wake run once ctx is done, instead of for the context of an
// earlier On. It does nothing for the context it already watches, or for
// one that is never done. Wake may run after the wait it was for has
// ended: it must be harmless then (a spurious wake-up).
func (w *Watch) On(ctx context.Context) {
	if ctx.Done() == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == ctx {
		return
	}
	if w.stop != nil {
		w.stop()
	}
	w.ctx, w.stop = ctx, context.AfterFunc(ctx, w.Wake)
}

// Stop forgets the context watched, so that Wake is not called for it.
func (w *Watch) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil {
		w.stop()
	}
	w.ctx, w.stop = nil, nil
}
