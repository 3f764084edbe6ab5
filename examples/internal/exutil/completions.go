package exutil

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/spin"
	"github.com/urma-go/sdk/urma"
)

// Completions is a JFC with the way to wait on it: busy polling (spin,
// yielding to the scheduler by the clock) or event mode (Rearm, then sleep
// on a JFCE).
type Completions struct {
	JFC    *jetty.JFC
	JFCE   *jetty.JFCE
	crs    []jetty.CR
	queued []jetty.CR
	pace   spin.Pacer
}

// NewCompletions creates a JFC of depth records, with a JFCE when event is
// set.
func NewCompletions(ctx *urma.Context, depth int, event bool) (*Completions, error) {
	c := &Completions{crs: make([]jetty.CR, 16)}
	var err error
	if event {
		if c.JFCE, err = jetty.NewJFCE(ctx); err != nil {
			return nil, err
		}
	}
	if c.JFC, err = jetty.NewJFC(ctx, jetty.JFCConfig{Depth: depth, JFCE: c.JFCE}); err != nil {
		_ = c.JFCE.Close()
		return nil, err
	}
	return c, nil
}

// Event reports event mode.
func (c *Completions) Event() bool { return c.JFCE != nil }

// Close closes the JFC and the JFCE. Nil-safe.
func (c *Completions) Close() error {
	if c == nil {
		return nil
	}
	return errors.Join(c.JFC.Close(), c.JFCE.Close())
}

// eventSlice bounds one sleep on the JFCE, so that a cancelled ctx is
// noticed.
const eventSlice = 100 * time.Millisecond

// Queued is the number of records already polled that Next returns
// without polling again.
func (c *Completions) Queued() int { return len(c.queued) }

// Next returns the next record. It gives up when ctx is done or after
// limit without a record. A record with an error status is returned with
// its error.
func (c *Completions) Next(ctx context.Context, limit time.Duration) (jetty.CR, error) {
	cr, err := c.NextRef(ctx, limit)
	if cr == nil {
		return jetty.CR{}, err
	}
	return *cr, err
}

// NextRef is Next without copying the record out: it stays in c's
// buffer, valid until the next call. A busy loop reads it in place, field
// by field: a copy loads it in wide loads that the poll's narrow stores
// of its fields cannot forward, and each waits for every store before it,
// such as a request's data on its way to a peer. The record is nil when
// there is none (ctx done, or nothing within limit).
func (c *Completions) NextRef(ctx context.Context, limit time.Duration) (*jetty.CR, error) {
	if len(c.queued) > 0 {
		cr := &c.queued[0]
		c.queued = c.queued[1:]
		return cr, cr.Err()
	}
	// The clock is read once the pacer says a while has passed, not on
	// every call: a busy caller takes a record almost every time.
	var deadline time.Time
	var wait spin.Wait // gives the core away in a long wait
	for {
		n, err := c.JFC.Poll(c.crs)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			c.queued = c.crs[1:n]
			return &c.crs[0], c.crs[0].Err()
		}
		wait.Idle()
		if c.pace.Tick() || c.Event() {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			switch now := time.Now(); {
			case deadline.IsZero():
				deadline = now.Add(limit)
			case now.After(deadline):
				return nil, fmt.Errorf("no completion in %v", limit)
			}
		}
		if !c.Event() {
			continue
		}
		// Rearm refuses while records are unread: the race between the
		// last poll and going to sleep.
		if err := c.JFC.Rearm(false); errors.Is(err, urma.ErrAgain) {
			continue
		} else if err != nil {
			return nil, err
		}
		if err := c.waitEvent(ctx); err != nil && !errors.Is(err, urma.ErrTimeout) {
			return nil, err
		}
	}
}

// Explain returns the cause of err when err is a post refused because
// its queue is in ERROR (urma.ErrBadState): a queue goes there when one of
// its requests fails, and that request's record says why (ACK_TIMEOUT_ERR:
// the peer is gone), where the refusal only says that the queue stopped.
// It looks at the records already polled and those waiting in the JFC,
// and returns the first failed one's *jetty.CRError followed by err. Any
// other error, or a refusal with no failed record (an RC jetty whose bound
// peer vanished goes to ERROR without one), is returned as it is. It
// consumes the records: call it once a loop has failed.
func (c *Completions) Explain(err error) error {
	if !errors.Is(err, urma.ErrBadState) {
		return err
	}
	for {
		for _, cr := range c.queued {
			if !cr.OK() {
				c.queued = nil
				return fmt.Errorf("request failed: %w (then: %w)", cr.Err(), err)
			}
		}
		n, perr := c.JFC.Poll(c.crs)
		if perr != nil || n == 0 {
			c.queued = nil
			return err
		}
		c.queued = c.crs[:n]
	}
}

// waitEvent sleeps until the JFC's event, ctx's end, or eventSlice, so
// that the loop above looks at its deadline.
func (c *Completions) waitEvent(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, eventSlice)
	defer cancel()
	return c.JFC.Wait(ctx)
}
