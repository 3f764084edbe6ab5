package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/rdmacm"
)

// runRping is the rping option: the same ping loop, with rdma-core's rping
// (or another krping in this mode) at the other end. There is no
// out-of-band channel: addr:port is the rdma_cm listener, the connection
// carries nothing else, and the advertisements name buffers by address and
// rkey. Both ends must be given the same size (rping -S).
func runRping(ctx context.Context, w io.Writer, c config) error {
	o := c.opts
	switch {
	case o.server:
		return rpingServe(ctx, w, c, nil, 1)
	case o.client:
		return rpingDial(ctx, w, c, net.JoinHostPort(o.addr, strconv.Itoa(o.port)), 1)
	}
	// One process: the server listens on a free port unless port= was
	// given, and says where.
	if o.port == rpingPort {
		c.opts.port = 0
	}
	ready := make(chan string, 1)
	var wg sync.WaitGroup
	var srvErr error
	lw := exutil.LockedWriter(w)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ready)
		srvErr = rpingServe(sctx, lw, c, ready, 1)
	}()
	addr, ok := <-ready
	if !ok {
		wg.Wait()
		return srvErr
	}
	cliErr := rpingDial(ctx, lw, c, addr, 2)
	if cliErr != nil {
		cancel()
	}
	wg.Wait()
	return errors.Join(cliErr, srvErr)
}

// rpingServe listens on addr:port, accepts one connection and answers
// pings until the client disconnects (as rping -s does) or count= pings
// are done. ready, if set, receives the listener's address.
func rpingServe(ctx context.Context, w io.Writer, c config, ready chan<- string, n int) (err error) {
	o := c.opts
	eid, err := serverEID(c)
	if err != nil {
		return err
	}
	p, err := newPeer("server", o, c.provider, c.dev, eid)
	defer func() { err = errors.Join(err, p.close()) }()
	if err != nil {
		return err
	}
	if err := p.buffers(o.size); err != nil {
		return err
	}
	l, err := rdmacm.Listen(p.ctx, net.JoinHostPort(o.addr, strconv.Itoa(o.port)))
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Fprintf(w, "krping: rping server on %v eid %v, listening on %v\n", p.ctx.Device(), p.ctx.EID(), l.Addr())
	if ready != nil {
		ready <- l.Addr().String()
	}
	if p.cm, err = l.Accept(ctx, p.jetty); err != nil {
		return err
	}
	_ = l.Close() // one connection, as rping -s without -P
	fmt.Fprintf(w, "krping: rping connection from %v\n", p.cm.PeerAddr())
	sctx, cancel := cancelWhen(ctx, p.cm.Done(), errHangup)
	defer cancel(nil)
	err = unlessHungUp(ctx, sctx, pingServer(sctx, w, p, o))
	if err == nil && ctx.Err() == nil {
		<-sctx.Done() // count= pings done: wait for the client to hang up
		if !errors.Is(context.Cause(sctx), errHangup) {
			err = ctx.Err()
		}
	}
	fmt.Fprintln(w, p.stats.line(n, c.dev))
	return err
}

// rpingDial connects to the rping server at addr, pings, and disconnects,
// which ends the server (rping -c).
func rpingDial(ctx context.Context, w io.Writer, c config, addr string, n int) (err error) {
	o := c.opts
	eid, err := clientEID(c)
	if err != nil {
		return err
	}
	p, err := newPeer("client", o, c.provider, c.dev, eid)
	defer func() { err = errors.Join(err, p.close()) }()
	if err != nil {
		return err
	}
	if err := p.buffers(o.size); err != nil {
		return err
	}
	dctx, stop := context.WithTimeout(ctx, 30*time.Second)
	p.cm, err = rdmacm.Dial(dctx, p.jetty, addr)
	stop()
	if err != nil {
		return err
	}
	mode := "event"
	if o.poll {
		mode = "poll"
	}
	fmt.Fprintf(w, "krping: rping client on %v eid %v, connected to %v: ping test, count %d, size %d, %s mode\n",
		p.ctx.Device(), p.ctx.EID(), addr, o.count, o.size, mode)
	cctx, cancel := cancelWhen(ctx, p.cm.Done(), errServerGone)
	defer cancel(nil)
	if err := pingClient(cctx, w, p, o); err != nil {
		// As on the server: flushed receives can come before the event.
		if ctx.Err() == nil && endsWithin(p.cm.Done(), time.Second) {
			return fmt.Errorf("%w: %w", errServerGone, err)
		}
		return err
	}
	fmt.Fprintln(w, p.stats.line(n, c.dev))
	return nil
}
