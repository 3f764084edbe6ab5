package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/urma"
)

// dialWait is how long a client retries a server that is not listening
// yet.
const dialWait = 10 * time.Second

// run runs the side or sides cfg asks for and prints to w. It returns
// only after freeing everything, also when ctx is cancelled.
func run(ctx context.Context, cfg config, w io.Writer) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	dev, err := exutil.FindDevice(cfg.Provider, cfg.Dev)
	if err != nil {
		return err
	}
	switch {
	case cfg.Server:
		l, err := net.Listen("tcp", cfg.Addr)
		if err != nil {
			return err
		}
		defer l.Close()
		fmt.Fprintf(w, "events: listening on %s\n", l.Addr())
		return server(ctx, cfg, dev, l, w)
	case cfg.Client:
		return client(ctx, cfg, dev, cfg.Addr, w, "client side")
	default:
		return oneProcess(ctx, cfg, dev, w)
	}
}

// oneProcess runs the server in a goroutine and the client here, over an
// out-of-band channel on a free port. Whichever fails first stops the
// other and is the error reported.
func oneProcess(ctx context.Context, cfg config, dev *urma.Device, w io.Writer) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	both, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	srvErr := make(chan error, 1)
	go func() {
		err := server(both, cfg, dev, l, nil)
		if err != nil {
			cancel(fmt.Errorf("server: %w", err))
		}
		srvErr <- err
	}()
	if err := client(both, cfg, dev, l.Addr().String(), w, "both sides"); err != nil {
		cancel(fmt.Errorf("client: %w", err))
	}
	<-srvErr
	if err := ctx.Err(); err != nil {
		return err
	}
	if both.Err() != nil {
		return context.Cause(both)
	}
	return nil
}

// server serves one client on l. With w nil it prints nothing: in one
// process the client's figures already cover both sides.
func server(ctx context.Context, cfg config, dev *urma.Device, l net.Listener, w io.Writer) error {
	conn, err := exutil.Accept(ctx, l)
	if err != nil {
		return err
	}
	defer conn.Close()
	defer context.AfterFunc(ctx, func() { _ = conn.Close() })()
	var msg [helloLen]byte
	if _, err := io.ReadFull(conn, msg[:]); err != nil {
		return err
	}
	h, err := parseHello(msg[:])
	if err == nil {
		err = accept(cfg, dev, h)
	}
	reason := ""
	if err != nil {
		reason = err.Error()
	}
	if werr := writeReason(conn, reason); err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("refused the client: %w", err)
	}
	if w != nil {
		printHeader(w, dev, h, "server side")
	}
	eid, err := cfg.EIDFor(false)
	if err != nil {
		return err
	}
	var rows []result
	for _, mode := range h.modes {
		r, err := serveMode(ctx, cfg, eid, conn, h, mode)
		if err != nil {
			return fmt.Errorf("%s mode: %w", mode, err)
		}
		if w != nil {
			printTable(w, &r)
		}
		rows = append(rows, r)
	}
	if w != nil && len(rows) == 2 {
		printComparison(w, rows[0], rows[1])
	}
	return nil
}

// accept decides whether this server runs what the client asks for.
func accept(cfg config, dev *urma.Device, h hello) error {
	if !slices.Equal(cfg.modes, h.modes) && cfg.Mode != "both" {
		return fmt.Errorf("the client asks for %s mode, the server runs -mode %s",
			strings.Join(h.modes, " and "), cfg.Mode)
	}
	if limit := dev.Attr().MaxMsgSize; uint64(h.size) > limit {
		return fmt.Errorf("%d-byte messages are above %s's limit of %d", h.size, dev, limit)
	}
	return nil
}

func printHeader(w io.Writer, dev *urma.Device, h hello, cpu string) {
	fmt.Fprintf(w, "events: %v, RM, %d round trips of %d bytes\n", dev, h.count, h.size)
	fmt.Fprintf(w, "cpu: user+sys of this process, %s\n", cpu)
	printTable(w, nil)
}

// client connects to the server at addr and runs the ping-pong in each of
// cfg's modes; cpu says whose CPU time the process's figures cover.
func client(ctx context.Context, cfg config, dev *urma.Device, addr string, w io.Writer, cpu string) error {
	if limit := dev.Attr().MaxMsgSize; uint64(cfg.size) > limit {
		return fmt.Errorf("-size %d is above %s's limit of %d", cfg.size, dev, limit)
	}
	eid, err := cfg.EIDFor(true)
	if err != nil {
		return err
	}
	conn, err := exutil.Dial(ctx, addr, dialWait)
	if err != nil {
		return err
	}
	defer conn.Close()
	defer context.AfterFunc(ctx, func() { _ = conn.Close() })()
	h := hello{modes: cfg.modes, count: cfg.count, size: cfg.size}
	if _, err := conn.Write(h.marshal()); err != nil {
		return err
	}
	reason, err := readReason(conn)
	if err != nil {
		return err
	}
	if reason != "" {
		return fmt.Errorf("the server refused: %s", reason)
	}
	printHeader(w, dev, h, cpu)
	var rows []result
	for _, mode := range cfg.modes {
		r, err := pingMode(ctx, cfg, eid, conn, mode)
		if err != nil {
			return fmt.Errorf("%s mode: %w", mode, err)
		}
		printTable(w, &r)
		rows = append(rows, r)
	}
	if len(rows) == 2 {
		printComparison(w, rows[0], rows[1])
	}
	return nil
}

// serveMode is the server's part of one mode's run.
func serveMode(ctx context.Context, cfg config, eid int, conn net.Conn, h hello, mode string) (r result, err error) {
	s, err := newSide("server", cfg, eid, h.size, mode == "event")
	defer closeSide(s, &err)
	if err != nil {
		return r, err
	}
	if err := s.connect(ctx, conn); err != nil {
		return r, err
	}
	m, err := startMeter()
	if err != nil {
		return r, err
	}
	if _, err := conn.Write([]byte{0}); err != nil { // go
		return r, err
	}
	mctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	peerDone := watchPeer(conn, cancel, "the client")
	if err := s.serve(mctx, h.count); err != nil {
		return r, causeOf(mctx, err)
	}
	r = result{mode: mode, count: h.count}
	if r.wall, r.cpu, err = m.stop(); err != nil {
		return r, err
	}
	return r, finish(conn, peerDone)
}

// pingMode is the client's part of one mode's run.
func pingMode(ctx context.Context, cfg config, eid int, conn net.Conn, mode string) (r result, err error) {
	s, err := newSide("client", cfg, eid, cfg.size, mode == "event")
	defer closeSide(s, &err)
	if err != nil {
		return r, err
	}
	if err := s.connect(ctx, conn); err != nil {
		return r, err
	}
	if _, err := io.ReadFull(conn, make([]byte, 1)); err != nil { // go
		return r, err
	}
	// Every sample is kept for exact percentiles: 8 bytes a round trip,
	// allocated up front (to a bound) so that growing the slice does not
	// show up in the latencies.
	samples := make([]time.Duration, 0, min(cfg.count, 1<<20))
	mctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	peerDone := watchPeer(conn, cancel, "the server")
	m, err := startMeter()
	if err != nil {
		return r, err
	}
	if samples, err = s.ping(mctx, cfg.count, cfg.interval, samples); err != nil {
		return r, causeOf(mctx, err)
	}
	r = result{mode: mode, count: cfg.count}
	if r.wall, r.cpu, err = m.stop(); err != nil {
		return r, err
	}
	lat := summarize(samples)
	r.lat = &lat
	return r, finish(conn, peerDone)
}

// closeSide frees s and reports a failure to do so unless an earlier error
// is already being returned.
func closeSide(s *side, err *error) {
	if cerr := s.close(); cerr != nil && *err == nil {
		*err = fmt.Errorf("cleanup: %w", cerr)
	}
}

// watchPeer reads the peer's done byte in the background while the
// ping-pong runs. If that read fails first, the peer is gone: cancel stops
// the local loop at once instead of leaving it to wait out waitLimit.
func watchPeer(conn net.Conn, cancel context.CancelCauseFunc, peer string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(conn, make([]byte, 1))
		if err != nil {
			err = fmt.Errorf("%s went away: %w", peer, err)
			cancel(err)
		}
		done <- err
	}()
	return done
}

// finish tells the peer this side is done and waits until the peer is
// too, so that neither frees its queues while the other still uses them.
func finish(conn net.Conn, peerDone <-chan error) error {
	if _, err := conn.Write([]byte{0}); err != nil {
		return err
	}
	return <-peerDone
}

// causeOf turns the cancellation of a mode's run into its reason (the
// peer went away, or the other side of this process failed).
func causeOf(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return context.Cause(ctx)
	}
	return err
}
