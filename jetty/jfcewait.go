package jetty

import (
	"context"

	"github.com/urma-go/sdk/provider"
)

// One goroutine at a time, the leader, sleeps in the provider's Wait on
// behalf of every waiter of a JFCE; the others (followers) wait for it to
// hand out what it got. An event for a JFC that has a waiter of its own
// (JFC.Wait, PollWait) goes to that waiter; the others go to JFCE.Wait.
// Events taken from the provider and not yet handed out are held, per JFC,
// so none is lost whoever took it. All of it is under JFCE.mu.
type waiting struct {
	leading bool
	// held counts the events taken for each JFC and not handed out.
	held map[*JFC]int
	// waiters counts the goroutines in JFC.Wait or PollWait for each JFC:
	// its events are theirs, not JFCE.Wait's.
	waiters map[*JFC]int
	// followers wait on changed, which the leader closes when it leaves
	// or took events; nil while nobody follows, so that a lone waiter
	// allocates nothing.
	followers int
	changed   chan struct{}
}

// await waits for events: with want, for one of want's; without, for
// those of any JFC without a waiter of its own, up to len(out) into out.
// It returns how many it handed out, or ctx's error, or the provider's.
func (e *JFCE) await(ctx context.Context, want *JFC, out []*JFC) (int, error) {
	e.mu.Lock()
	w := &e.waiting
	if want != nil {
		if w.waiters == nil {
			w.waiters = map[*JFC]int{}
		}
		w.waiters[want]++
		defer func() {
			e.mu.Lock()
			if w.waiters[want]--; w.waiters[want] == 0 {
				delete(w.waiters, want)
			}
			e.mu.Unlock()
		}()
	}
	for {
		if n := e.takeHeld(want, out); n > 0 {
			e.mu.Unlock()
			return n, nil
		}
		if !w.leading {
			n, err := e.lead(ctx, want, out)
			if n > 0 || err != nil {
				e.mu.Unlock()
				return n, err
			}
			continue
		}
		if w.changed == nil {
			w.changed = make(chan struct{})
		}
		ch := w.changed
		w.followers++
		e.mu.Unlock()
		var done bool
		select {
		case <-ch:
		case <-ctx.Done():
			done = true
		}
		e.mu.Lock()
		w.followers--
		if done {
			if n := e.takeHeld(want, out); n > 0 {
				e.mu.Unlock()
				return n, nil
			}
			e.mu.Unlock()
			return 0, provider.ContextErr(ctx)
		}
	}
}

// lead sleeps in the provider's Wait, with e.mu released meanwhile, and
// hands out what it got: want's first event (or, without want, the events
// of JFCs without a waiter of their own, into out) to the caller, the
// others to held. It returns with e.mu held.
func (e *JFCE) lead(ctx context.Context, want *JFC, out []*JFC) (int, error) {
	w := &e.waiting
	w.leading = true
	size := max(len(out), 8)
	if cap(e.scratch) < size {
		e.scratch = make([]any, size)
	}
	s := e.scratch[:size]
	e.mu.Unlock()
	k, err := e.p.Wait(ctx, s)
	e.mu.Lock()
	w.leading = false
	n := 0
	for i := 0; i < k; i++ {
		j, _ := s[i].(*JFC)
		s[i] = nil
		switch {
		case j == nil:
		case want != nil && j == want && n == 0:
			n = 1
		case want == nil && w.waiters[j] == 0 && n < len(out):
			out[n] = j
			n++
		default:
			if w.held == nil {
				w.held = map[*JFC]int{}
			}
			w.held[j]++
		}
	}
	if w.changed != nil && w.followers > 0 {
		close(w.changed)
		w.changed = nil
	}
	if n > 0 {
		return n, nil
	}
	return 0, err
}

// takeHeld hands out held events: one of want's, or without want those of
// JFCs without a waiter of their own, one entry per event, into out.
func (e *JFCE) takeHeld(want *JFC, out []*JFC) int {
	w := &e.waiting
	if len(w.held) == 0 {
		return 0
	}
	if want != nil {
		if w.held[want] == 0 {
			return 0
		}
		if w.held[want]--; w.held[want] == 0 {
			delete(w.held, want)
		}
		return 1
	}
	n := 0
	for j, c := range w.held {
		if w.waiters[j] > 0 {
			continue
		}
		for ; c > 0 && n < len(out); c-- {
			out[n] = j
			n++
		}
		if c == 0 {
			delete(w.held, j)
		} else {
			w.held[j] = c
		}
		if n == len(out) {
			break
		}
	}
	return n
}

// dropHeld acknowledges the events held for j, which was never given them:
// a JFC with unacknowledged events cannot be closed.
func (e *JFCE) dropHeld(j *JFC) error {
	e.mu.Lock()
	n := e.waiting.held[j]
	delete(e.waiting.held, j)
	e.mu.Unlock()
	if n == 0 {
		return nil
	}
	return j.p.Ack(n)
}
