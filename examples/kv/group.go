package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// group is the clients one goroutine drives, all completing into one JFC,
// as one thread of redis-benchmark drives all its connections: a poller
// per client would put more busy goroutines than cores on a small machine,
// and they would then take turns by the scheduler's time slice.
type group struct {
	cq      *exutil.Completions
	w       *waiter
	clients []*client
}

// newGroups makes cfg.clients clients in cfg.threads groups (one per
// client when threads is 0), client i in group i mod threads. It returns
// what it made so far along with an error.
func newGroups(ctx *urma.Context, cfg *config, jfrToken uint32) ([]*group, error) {
	threads := cfg.threads
	if threads == 0 || threads > cfg.clients {
		threads = cfg.clients
	}
	_, _, need := clientDepths(ctx, cfg)
	groups := make([]*group, threads)
	for g := range groups {
		n := (cfg.clients - g + threads - 1) / threads
		cq, err := exutil.NewCompletions(ctx, n*need, cfg.Event())
		if err != nil {
			return groups[:g], err
		}
		groups[g] = &group{cq: cq, w: newWaiter(cq.JFC, cfg.Event(), cfg.spin)}
	}
	for i := range cfg.clients {
		g := groups[i%threads]
		c, err := newClient(ctx, cfg, i, len(g.clients), g.cq, jfrToken)
		g.clients = append(g.clients, c)
		if err != nil {
			return groups, err
		}
	}
	return groups, nil
}

// close closes the group's clients, then its JFC. Nil-safe.
func (g *group) close() error {
	if g == nil {
		return nil
	}
	var errs []error
	for _, c := range g.clients {
		errs = append(errs, c.close())
	}
	return errors.Join(append(errs, g.cq.Close())...)
}

// run runs a phase on every client of the group, phases[i] being client
// i's, keeping their windows full (or, with -batch, issuing a window's
// worth once all of a client's requests are answered) and checking every
// response.
func (g *group) run(ctx context.Context, phases []phase) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer g.w.watchStalls(cancel)()
	for i, c := range g.clients {
		c.begin(&phases[i])
	}
	for {
		now := time.Now()
		busy := false
		for i, c := range g.clients {
			more, err := c.fill(&phases[i], now)
			if err != nil {
				return err
			}
			busy = busy || more
		}
		if !busy {
			return nil
		}
		// Every record already polled is taken before requests are
		// issued again, so that the window entries they free go out
		// in one post per client. They were polled together, so one
		// clock reading dates them all.
		var polled time.Time
		for {
			cr, err := g.w.next(ctx)
			if err != nil {
				if cr != nil && !cr.OK() {
					err = fmt.Errorf("%w: %v", err, cr)
				}
				return fmt.Errorf("clients %v: %w", g.ids(), err)
			}
			// A send-side record is a signaled WRITE or ring: its
			// slots are free again.
			if cr.Flags&jetty.CRRecv != 0 {
				gi := int(cr.UserCtx >> 32)
				if gi >= len(g.clients) {
					return fmt.Errorf("clients %v: unexpected receive %v", g.ids(), cr)
				}
				c := g.clients[gi]
				if polled.IsZero() {
					polled = time.Now()
				}
				if err := c.receive(cr, !phases[gi].preload, polled); err != nil {
					return fmt.Errorf("client %d: %w", c.id, err)
				}
			}
			if g.w.queuedRecords() == 0 {
				break
			}
		}
	}
}

// ids lists the group's client numbers, for errors.
func (g *group) ids() []int {
	ids := make([]int, len(g.clients))
	for i, c := range g.clients {
		ids[i] = c.id
	}
	return ids
}

// runAll runs a phase on every group at once, p(i) being client i's; the
// first failure stops the others.
func runAll(ctx context.Context, groups []*group, p func(i int) phase) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		phases := make([]phase, len(g.clients))
		for j, c := range g.clients {
			phases[j] = p(c.id)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = g.run(ctx, phases); errs[i] != nil {
				cancel(errs[i])
			}
		}()
	}
	wg.Wait()
	if errors.Join(errs...) == nil {
		return nil
	}
	return context.Cause(ctx)
}
