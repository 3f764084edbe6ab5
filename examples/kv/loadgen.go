package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"time"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// result is what a load generator run measured.
type result struct {
	preloaded uint64
	requests  uint64 // measured
	elapsed   time.Duration
	counts    counts
	hist      hist
	sent      uint64 // requests of every phase
	served    uint64 // what the server says it served
	// posts counts the measured phase's fills that issued requests (with
	// -batch, one per window); parks the clients' waits that slept on a
	// JFCE.
	posts, parks uint64
	// rings counts the doorbells the clients rang (see bell).
	rings uint64
	// server is what the server's workers counted, in the one-process
	// mode.
	server workerCounts
}

// loadgen runs cfg.clients clients against the server at the other end of
// conn: the handshake, the preload, the measured phase with a progress
// line each second, and the closing count.
func loadgen(ctx context.Context, out io.Writer, cfg config, conn net.Conn) (res result, err error) {
	defer context.AfterFunc(ctx, func() { _ = conn.Close() })()
	eid, err := cfg.EIDFor(true)
	if err != nil {
		return res, err
	}
	uctx, err := exutil.Open(cfg.Provider, cfg.Dev, eid)
	if err != nil {
		return res, err
	}
	var groups []*group
	var region *segment.Target
	defer func() {
		errs := []error{err, region.Unimport()}
		for _, g := range groups {
			errs = append(errs, g.close())
		}
		err = errors.Join(append(errs, uctx.Close())...)
	}()
	token := rand.Uint32() | 1
	if groups, err = newGroups(uctx, &cfg, token); err != nil {
		return res, err
	}
	clients := make([]*client, cfg.clients)
	var mine bootstrap.Bundle
	for _, g := range groups {
		for _, c := range g.clients {
			clients[c.id] = c
			mine.AddJFR(clientName(c.id), c.jfr, token)
		}
	}
	theirs, workers, err := handshake(ctx, conn, cfg, &mine)
	if err != nil {
		return res, err
	}
	if region, err = theirs.ImportSegment(ctx, uctx, "region"); err != nil {
		return res, fmt.Errorf("import the request region: %w", err)
	}
	for _, c := range clients {
		if err := c.connect(uctx, theirs, workers, region); err != nil {
			return res, err
		}
	}
	fmt.Fprintf(out, "kv: load generator on %v, EID %v: %d clients on %d goroutines, window %d, %d workers, value %d B, %d keys, GET %.0f%%, %s mode\n",
		uctx.Device(), uctx.EID(), cfg.clients, len(groups), cfg.window, workers, cfg.value, cfg.keys, 100*cfg.getRatio, cfg.Mode)

	// The server says nothing more until done: a read that ends sooner
	// means it went away.
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type served struct {
		n   uint64
		err error
	}
	ack := make(chan served, 1)
	go func() {
		var n uint64
		err := binary.Read(conn, binary.BigEndian, &n)
		if err != nil {
			cancel(&serverGoneError{addr: conn.RemoteAddr().String(), conn: err})
		}
		ack <- served{n, err}
	}()

	if cfg.preload {
		start := time.Now()
		if err := runAll(rctx, groups, func(int) phase { return phase{preload: true} }); err != nil {
			return res, serverGone(ctx, rctx, err)
		}
		for _, c := range clients {
			res.preloaded += uint64(c.m.owned())
		}
		fmt.Fprintf(out, "kv: preloaded %d keys in %.2f s\n", res.preloaded, time.Since(start).Seconds())
	}
	if err := measure(rctx, out, cfg, groups, clients, &res); err != nil {
		return res, serverGone(ctx, rctx, err)
	}

	for _, c := range clients {
		res.sent += c.sent
		res.posts += c.posts
		res.rings += c.rang
	}
	for _, g := range groups {
		res.parks += g.w.parks.Load()
	}
	if err := binary.Write(conn, binary.BigEndian, res.sent); err != nil {
		return res, err
	}
	select {
	case a := <-ack:
		res.served, err = a.n, a.err
	case <-time.After(waitLimit):
		err = fmt.Errorf("the server did not answer done in %v", waitLimit)
	}
	if err != nil {
		return res, err
	}
	report(out, &res)
	if cfg.Event() {
		fmt.Fprintf(out, "kv: the clients slept on their JFCE %d times (-spin %v)\n", res.parks, cfg.spin)
	}
	if res.rings > 0 {
		fmt.Fprintf(out, "kv: the clients rang the workers' doorbells %d times\n", res.rings)
	}
	if res.served != res.sent {
		return res, fmt.Errorf("the server served %d requests, the clients sent %d", res.served, res.sent)
	}
	return res, nil
}

// serverGoneError is the load generator's failure when the server went
// away: its end of the connection closed (conn is how the read of it
// ended). req is the first request that failed with it, if one did.
type serverGoneError struct {
	addr string
	conn error
	req  *jetty.CRError
}

func (e *serverGoneError) Error() string {
	if e.req != nil {
		return fmt.Sprintf("the server at %s went away: %v", e.addr, e.req)
	}
	if errors.Is(e.conn, io.EOF) {
		return fmt.Sprintf("the server at %s went away: it closed the connection", e.addr)
	}
	return fmt.Sprintf("the server at %s went away: %v", e.addr, e.conn)
}

func (e *serverGoneError) Unwrap() error {
	if e.req != nil {
		return e.req
	}
	return e.conn
}

// serverGone returns err, the failure of a phase, as the server's going
// away when that is what it was: rctx, the phase's context, is cancelled
// with a *serverGoneError when the server's end of the connection closes.
// A request to a server that died fails about when that happens, and can
// come first: a failed request waits a second for the news. The error then
// names the server and the failed request's status, the news, rather than
// what became of the queue after.
func serverGone(ctx, rctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	var cre *jetty.CRError
	if errors.As(err, &cre) || errors.Is(err, urma.ErrBadState) {
		select {
		case <-rctx.Done():
		case <-time.After(time.Second):
		}
	}
	var g *serverGoneError
	if !errors.As(context.Cause(rctx), &g) {
		return err
	}
	gone := *g
	if cre != nil && gone.req == nil {
		gone.req = cre
	}
	return &gone
}

// handshake sends the hello and the clients' bundle, and returns the
// server's bundle and how many workers its request region serves.
func handshake(ctx context.Context, conn net.Conn, cfg config, mine *bootstrap.Bundle) (*bootstrap.Bundle, int, error) {
	if err := binary.Write(conn, binary.BigEndian, hello{uint16(cfg.window), uint16(cfg.value)}); err != nil {
		return nil, 0, err
	}
	if err := bootstrap.Write(ctx, conn, mine); err != nil {
		return nil, 0, err
	}
	reason, err := readReason(conn)
	if err != nil {
		return nil, 0, err
	}
	if reason != "" {
		return nil, 0, fmt.Errorf("server refused: %s", reason)
	}
	theirs, err := bootstrap.Read(ctx, conn)
	if err != nil {
		return nil, 0, err
	}
	region, err := theirs.Lookup("region")
	if err != nil {
		return nil, 0, err
	}
	workers, err := regionWorkers(region.Segment.Len, cfg.clients, cfg.window, cfg.value)
	return theirs, workers, err
}

// measure runs the measured phase, printing a progress line each second,
// and gathers the clients' statistics into res.
func measure(ctx context.Context, out io.Writer, cfg config, groups []*group, clients []*client, res *result) error {
	start := time.Now()
	var deadline time.Time
	if cfg.duration > 0 {
		deadline = start.Add(cfg.duration)
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var last uint64
		lastAt := start
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				var n uint64
				for _, c := range clients {
					n += c.done.Load()
				}
				fmt.Fprintf(out, "kv: %5.1f s %.3f Mops (%d requests)\n",
					now.Sub(start).Seconds(), float64(n-last)/now.Sub(lastAt).Seconds()/1e6, n)
				last, lastAt = n, now
			}
		}
	}()
	err := runAll(ctx, groups, func(i int) phase {
		p := phase{budget: -1, deadline: deadline}
		if cfg.requests > 0 {
			p.budget = cfg.requests / int64(len(clients))
			if int64(i) < cfg.requests%int64(len(clients)) {
				p.budget++
			}
		}
		return p
	})
	res.elapsed = time.Since(start)
	close(stop)
	<-stopped
	for _, c := range clients {
		res.hist.merge(&c.hist)
		res.counts.add(c.counts)
	}
	res.requests = res.hist.n
	return err
}

// report prints the summary.
func report(out io.Writer, res *result) {
	h, c := &res.hist, &res.counts
	secs := res.elapsed.Seconds()
	// One write, so that nothing else printed lands between the lines.
	fmt.Fprintf(out, "kv: %d requests in %.3f s: %.3f Mops (%.0f ops/s), latency p50 %.1f µs, p99 %.1f µs, p99.9 %.1f µs (mean %.1f, max %.1f)\n"+
		"kv: GET %d (found %d, missing %d, unknown %d), PUT %d: every response correct\n"+
		"kv: the clients sent %d requests, the server served %d\n",
		res.requests, secs, float64(res.requests)/secs/1e6, float64(res.requests)/secs,
		us(h.quantile(0.5)), us(h.quantile(0.99)), us(h.quantile(0.999)), us(h.mean()), us(h.quantile(1)),
		c.gets, c.found, c.missing, c.unchecked, c.puts, res.sent, res.served)
}
