package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// run starts the server, the client, or both.
func run(ctx context.Context, w io.Writer, c config) error {
	o := c.opts
	if o.rping {
		return runRping(ctx, w, c)
	}
	switch {
	case o.server:
		return serve(ctx, w, c, nil, 1)
	case o.client:
		return dial(ctx, w, c, 1)
	}
	// One process: the server on addr, the client on the next EID, the
	// out-of-band connection over a free port unless port= was given.
	ln, err := net.Listen("tcp", net.JoinHostPort(o.addr, portOrZero(o)))
	if err != nil {
		return err
	}
	c.opts.port = ln.Addr().(*net.TCPAddr).Port
	var wg sync.WaitGroup
	var srvErr error
	lw := exutil.LockedWriter(w)
	wg.Add(1)
	go func() {
		defer wg.Done()
		srvErr = serve(ctx, lw, c, ln, 1)
	}()
	cliErr := dial(ctx, lw, c, 2)
	if cliErr != nil {
		_ = ln.Close()
	}
	wg.Wait()
	return errors.Join(cliErr, srvErr)
}

func portOrZero(o options) string {
	if o.port == defaultPort {
		return "0"
	}
	return strconv.Itoa(o.port)
}

// serverEID is the EID index whose address is addr=, so that krping's
// address names the server as it does for rdma_cm; -eid overrides it.
func serverEID(c config) (int, error) {
	if c.eid >= 0 {
		return c.eid, nil
	}
	d, err := exutil.FindDevice(c.provider, c.dev)
	if err != nil {
		return 0, err
	}
	if a, err := netip.ParseAddr(c.opts.addr); err == nil {
		for i, e := range d.EIDs() {
			if e.Addr().Unmap() == a.Unmap() {
				return i, nil
			}
		}
	}
	return 0, nil
}

// serve runs the server end: listen (unless ln is given), accept one
// client, run the test until it is done or the client says goodbye.
func serve(ctx context.Context, w io.Writer, c config, ln net.Listener, n int) (err error) {
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
	if ln == nil {
		if ln, err = net.Listen("tcp", net.JoinHostPort(o.addr, strconv.Itoa(o.port))); err != nil {
			return err
		}
	}
	defer ln.Close()
	fmt.Fprintf(w, "krping: server on %v eid %v, listening on %v\n", p.ctx.Device(), p.ctx.EID(), ln.Addr())
	conn, err := exutil.Accept(ctx, ln)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() }) // a client that never sends its test
	test, count, size, err := p.connect(ctx, conn, o, false)
	stop()
	if err != nil {
		return err
	}
	if o, err = follow(o, test, count, size); err != nil {
		return err
	}
	if err := p.buffers(o.size); err != nil {
		return err
	}
	// The client's goodbye (or its going away) ends the server's loop.
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	msgs := watch(conn, func() { cancel(errHangup) })
	err = unlessHungUp(ctx, sctx, serverTest(sctx, w, p, o))
	if err == nil {
		// Finished first (count= on the server): wait for the goodbye.
		select {
		case <-msgs:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	fmt.Fprintln(w, p.stats.line(n, c.dev))
	_, _ = conn.Write([]byte{bye})
	return err
}

// unlessHungUp is err, or nil when err is the client leaving: sctx is the
// server loop's context, cancelled with errHangup when the client goes. A
// failure right as the client leaves (its buffers are gone, its receives
// flushed) can come before the news that it left, so it waits a second
// for that news.
func unlessHungUp(ctx, sctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	if !hungUp(sctx, err) {
		endsWithin(sctx.Done(), time.Second)
	}
	if errors.Is(context.Cause(sctx), errHangup) {
		return nil
	}
	return err
}

// endsWithin reports whether done closes within d.
func endsWithin(done <-chan struct{}, d time.Duration) bool {
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// cancelWhen returns ctx cancelled with cause once done closes.
func cancelWhen(ctx context.Context, done <-chan struct{}, cause error) (context.Context, context.CancelCauseFunc) {
	cctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-done:
			cancel(cause)
		case <-cctx.Done():
		}
	}()
	return cctx, cancel
}

// bye is the goodbye each end sends the other over the out-of-band
// connection when its loop ends.
const bye = 1

// watch reads the out-of-band connection in the background: a goodbye, or
// the connection's end, calls gone. The returned channel yields the
// goodbyes and is closed at the end.
func watch(c net.Conn, gone func()) <-chan struct{} {
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		for {
			_, err := io.ReadFull(c, make([]byte, 1))
			gone()
			if err != nil {
				return
			}
			ch <- struct{}{}
		}
	}()
	return ch
}

// follow makes a server's options agree with the client's test: a server
// started without a test runs the client's, with its count and size.
func follow(o options, test string, count, size int) (options, error) {
	if o.test() != "ping" && o.test() != test {
		return o, fmt.Errorf("the client runs the %s test, this server %s", test, o.test())
	}
	o.wlat, o.rlat, o.bw, o.duplex = test == "wlat", test == "rlat", test == "bw" || test == "bw duplex", test == "bw duplex"
	if o.count == 0 {
		o.count = count
	}
	o.size = max(o.size, size)
	return o, nil
}

// serverTest runs the server's side of the selected test.
func serverTest(ctx context.Context, w io.Writer, p *peer, o options) error {
	if o.test() == "ping" {
		return pingServer(ctx, w, p, o)
	}
	remote, err := exchangeAds(ctx, p, false)
	if err != nil {
		return err
	}
	switch {
	case o.wlat:
		return wlat(ctx, w, p, o, remote, true)
	case o.bw && o.duplex:
		return bw(ctx, w, p, o, remote)
	}
	<-ctx.Done() // rlat and bw: the client does the work
	return ctx.Err()
}

// clientEID is the client's EID index: -eid, else 0 for a client of its
// own, else (both ends in one process) the EID after the server's.
func clientEID(c config) (int, error) {
	if c.eid >= 0 || c.opts.client {
		return max(c.eid, 0), nil
	}
	d, err := exutil.FindDevice(c.provider, c.dev)
	if err != nil {
		return 0, err
	}
	srv, err := serverEID(c)
	if err != nil {
		return 0, err
	}
	return (srv + 1) % len(d.EIDs()), nil
}

// dial runs the client end.
func dial(ctx context.Context, w io.Writer, c config, n int) (err error) {
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
	addr := net.JoinHostPort(o.addr, strconv.Itoa(o.port))
	conn, err := exutil.Dial(ctx, addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, _, _, err = p.connect(ctx, conn, o, true); err != nil {
		return err
	}
	if err := p.buffers(o.size); err != nil {
		return err
	}
	// The server going away ends the client's loop too.
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	msgs := watch(conn, func() { cancel(errServerGone) })
	// Say goodbye however the loop ends, and wait briefly for the server
	// to stop using this end's buffers before they are freed.
	defer func() {
		if !errors.Is(context.Cause(cctx), errServerGone) {
			_, _ = conn.Write([]byte{bye})
			select {
			case <-msgs:
			case <-time.After(2 * time.Second):
			}
		}
	}()
	mode := "event"
	if o.poll {
		mode = "poll"
	}
	fmt.Fprintf(w, "krping: client on %v eid %v, connected to %v: %s test, count %d, size %d, %s mode\n",
		p.ctx.Device(), p.ctx.EID(), addr, o.test(), o.count, o.size, mode)
	if err := clientTest(cctx, w, p, o); err != nil {
		return serverGone(ctx, cctx, addr, p.cq.Explain(err))
	}
	fmt.Fprintln(w, p.stats.line(n, c.dev))
	return nil
}

var errServerGone = errors.New("the server went away")

// serverGone returns err, the failure of the client's loop, as the
// server's going away when that is what it was: cctx, the loop's context,
// was cancelled with errServerGone when the server's end of the
// out-of-band connection closed. A request to a server that died fails
// about when that happens, and can come first: a failed request waits a
// second for the news. The error names the server and the status of the
// failed request, the news, rather than what became of the queue after.
func serverGone(ctx, cctx context.Context, addr string, err error) error {
	if ctx.Err() != nil {
		return err
	}
	var cre *jetty.CRError
	failed := errors.As(err, &cre) || errors.Is(err, urma.ErrBadState)
	if failed {
		endsWithin(cctx.Done(), time.Second)
	}
	if !errors.Is(context.Cause(cctx), errServerGone) {
		return err
	}
	g := &serverGoneError{addr: addr}
	if cre != nil {
		g.err = cre
	}
	return g
}

// serverGoneError is a client's failure when its server went away; err is
// the first of the client's requests that failed with it, if one did.
type serverGoneError struct {
	addr string
	err  error
}

func (e *serverGoneError) Error() string {
	s := "the server at " + e.addr + " went away"
	if e.err != nil {
		s += ": " + e.err.Error()
	}
	return s
}

func (e *serverGoneError) Unwrap() error        { return e.err }
func (e *serverGoneError) Is(target error) bool { return target == errServerGone }

// clientTest runs the client's side of the selected test.
func clientTest(ctx context.Context, w io.Writer, p *peer, o options) error {
	if o.test() == "ping" {
		return pingClient(ctx, w, p, o)
	}
	if o.count == 0 {
		return fmt.Errorf("the %s test needs count=N", o.test())
	}
	remote, err := exchangeAds(ctx, p, true)
	if err != nil {
		return err
	}
	switch {
	case o.wlat:
		return wlat(ctx, w, p, o, remote, false)
	case o.rlat:
		return rlat(ctx, w, p, o, remote)
	}
	return bw(ctx, w, p, o, remote)
}
