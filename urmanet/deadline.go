package urmanet

import (
	"sync"
	"time"
)

// deadline is a read or write deadline: a channel that is closed once the
// deadline passes, replaced when the deadline moves, so that a waiter
// selecting on it wakes at the deadline or when it is set in the past.
type deadline struct {
	mu    sync.Mutex
	timer *time.Timer
	c     chan struct{}
}

func newDeadline() deadline { return deadline{c: make(chan struct{})} }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.c // the timer fired: wait until it closed c
	}
	d.timer = nil
	closed := isClosed(d.c)
	if t.IsZero() {
		if closed {
			d.c = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if closed {
			d.c = make(chan struct{})
		}
		c := d.c
		d.timer = time.AfterFunc(dur, func() { close(c) })
		return
	}
	if !closed {
		close(d.c)
	}
}

// wait returns the channel that is closed once the deadline passes.
func (d *deadline) wait() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.c
}

// stop releases the timer.
func (d *deadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
