package urmanet

import (
	"sync"
	"time"
)

// deadline is a read or write deadline: a channel that is closed once the
// deadline passes, replaced when the deadline moves, so that a waiter
// selecting on it wakes at the deadline or when it is set in the past.
// kick, when set, is called once the channel closed, without the lock,
// for a waiter that sleeps elsewhere.
type deadline struct {
	mu    sync.Mutex
	timer *time.Timer
	c     chan struct{}
	kick  func()
}

func newDeadline() deadline { return deadline{c: make(chan struct{})} }

func (d *deadline) set(t time.Time) {
	if d.setLocked(t) && d.kick != nil {
		d.kick()
	}
}

// setLocked moves the deadline; it reports whether it closed the channel.
func (d *deadline) setLocked(t time.Time) bool {
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
		return false
	}
	if dur := time.Until(t); dur > 0 {
		if closed {
			d.c = make(chan struct{})
		}
		c, kick := d.c, d.kick
		d.timer = time.AfterFunc(dur, func() {
			close(c)
			if kick != nil {
				kick()
			}
		})
		return false
	}
	if !closed {
		close(d.c)
		return true
	}
	return false
}

// wait returns the channel that is closed once the deadline passes.
func (d *deadline) wait() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.c
}

// stop releases the timer. As in set, a timer that fired has closed c or
// is about to, and c must be closed before a later set reuses or
// replaces it; the timer is dropped so that a later set does not wait
// for a stopped one.
func (d *deadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.c
	}
	d.timer = nil
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
