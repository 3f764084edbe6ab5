// Command pingpong exchanges SEND ping/pong messages between a server and a
// client and checks one WRITE and one READ of a segment. Both sides run in
// one process, on two EIDs of the loopback device by default.
//
//	go run ./examples/pingpong -count 1000 -size 64 -mode poll
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/ib"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/spin"
	"github.com/urma-go/sdk/urma"
)

// config holds the command line.
type config struct {
	provider string // "" = any provider
	dev      string
	count    int
	size     int
	event    bool
}

// result is what run measured.
type result struct {
	messages int
	bytes    int64
	elapsed  time.Duration
}

const (
	slots      = 16 // receive buffers per side
	queueDepth = 64
	waitLimit  = 10 * time.Second
	// The tokens travel in the bundles, with the descriptors.
	jfrToken = 0x5eed
	segToken = 0xc0ffee
)

func main() {
	var cfg config
	var mode string
	flag.StringVar(&cfg.provider, "provider", "", "provider name (default: any provider that has -dev)")
	flag.StringVar(&cfg.dev, "dev", "loopback0", "device name")
	flag.IntVar(&cfg.count, "count", 1000, "round trips")
	flag.IntVar(&cfg.size, "size", 64, "message size in bytes")
	flag.StringVar(&mode, "mode", "poll", "completion mode: poll|event")
	flag.Parse()
	switch mode {
	case "poll":
	case "event":
		cfg.event = true
	default:
		fmt.Fprintf(os.Stderr, "pingpong: -mode %q: want poll or event\n", mode)
		os.Exit(2)
	}
	if _, err := run(os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "pingpong:", err)
		os.Exit(1)
	}
}

// findDevice picks the device named cfg.dev, of cfg.provider if set.
func findDevice(cfg config) (*urma.Device, error) {
	if cfg.provider == "" {
		return urma.DeviceByName(cfg.dev)
	}
	devs, err := urma.ProviderDevices(cfg.provider)
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		if d.Name() == cfg.dev {
			return d, nil
		}
	}
	return nil, fmt.Errorf("provider %s has no device %q", cfg.provider, cfg.dev)
}

// side is one end: a context, its completion queue, a JFS, a JFR and a
// segment that holds the receive slots followed by the send buffer.
type side struct {
	name   string
	ctx    *urma.Context
	jfce   *jetty.JFCE
	jfc    *jetty.JFC
	jfs    *jetty.JFS
	jfr    *jetty.JFR
	buf    *segment.Segment
	mem    *segment.Segment // the server's, for the client's WRITE and READ
	target *segment.Target  // the client's import of mem
	peer   *jetty.Remote    // the other side's JFR
	size   int
	event  bool
	crs    []jetty.CR
	queued []jetty.CR
	pace   spin.Pacer
}

func newSide(name string, dev *urma.Device, eidIndex int, cfg config) (*side, error) {
	s := &side{name: name, size: cfg.size, event: cfg.event, crs: make([]jetty.CR, 8)}
	var err error
	if s.ctx, err = urma.Open(dev, eidIndex, nil); err != nil {
		return nil, err
	}
	if cfg.event {
		if s.jfce, err = jetty.NewJFCE(s.ctx); err != nil {
			return s, err
		}
	}
	// The JFC takes the records of both queues: depth >= JFS + JFR depth.
	// Only this side's goroutine polls it, so it can be lock-free: its
	// polls then take records without a locked instruction.
	if s.jfc, err = jetty.NewJFC(s.ctx, jetty.JFCConfig{Depth: 2 * queueDepth, JFCE: s.jfce, LockFree: true}); err != nil {
		return s, err
	}
	if s.jfs, err = jetty.NewJFS(s.ctx, jetty.JFSConfig{Depth: queueDepth, Mode: urma.RM, JFC: s.jfc}); err != nil {
		return s, err
	}
	if s.jfr, err = jetty.NewJFR(s.ctx, jetty.JFRConfig{Depth: queueDepth, Mode: urma.RM, JFC: s.jfc,
		TokenPolicy: segment.TokenPlainText, Token: jfrToken}); err != nil {
		return s, err
	}
	if s.buf, err = segment.Alloc(s.ctx, uint64((slots+1)*cfg.size), segment.Config{Access: segment.LocalOnly}); err != nil {
		return s, err
	}
	for i := 0; i < slots; i++ {
		if err := s.jfr.Recv(s.slot(i), uint64(i)); err != nil {
			return s, err
		}
	}
	return s, nil
}

// slot is receive buffer i; the send buffer follows the slots.
func (s *side) slot(i int) segment.SGE { return s.buf.SGE(uint64(i*s.size), uint32(s.size)) }

func (s *side) sendBuf() ([]byte, segment.SGE) {
	off := slots * s.size
	return s.buf.Bytes()[off : off+s.size], s.buf.SGE(uint64(off), uint32(s.size))
}

// close releases everything in the order URMA wants: imports, queues, the
// JFC, the JFCE, memory, then the context. Every Close is idempotent and nil-safe, so close also serves a side that
// was only half set up.
func (s *side) close() error {
	if s == nil {
		return nil
	}
	return errors.Join(
		s.peer.Unimport(),
		s.target.Unimport(),
		s.jfs.Close(),
		s.jfr.Close(),
		s.jfc.Close(),
		s.jfce.Close(),
		s.buf.Unregister(),
		s.mem.Unregister(),
		s.ctx.Close(),
	)
}

// next returns the next completion record of the side's JFC, spinning a
// bounded number of times and then yielding (poll mode), or sleeping on
// the JFCE (event mode).
func (s *side) next() (jetty.CR, error) {
	if len(s.queued) > 0 {
		cr := s.queued[0]
		s.queued = s.queued[1:]
		return cr, cr.Err()
	}
	deadline := time.Now().Add(waitLimit)
	var wait spin.Wait // gives the core away in a long wait
	for {
		n, err := s.jfc.Poll(s.crs)
		if err != nil {
			return jetty.CR{}, err
		}
		if n > 0 {
			s.queued = s.crs[1:n]
			return s.crs[0], s.crs[0].Err()
		}
		if s.event {
			// Arm, then sleep until the next record. Rearm refuses while
			// records are unread, which is the race it protects against.
			if err := s.jfc.Rearm(false); errors.Is(err, urma.ErrAgain) {
				continue
			} else if err != nil {
				return jetty.CR{}, err
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			err := s.jfc.Wait(ctx)
			cancel()
			if err != nil {
				return jetty.CR{}, err
			}
			continue
		}
		// A busy loop yields to the scheduler by the clock (see package
		// spin), and that is when it looks at its deadline.
		wait.Idle()
		if s.pace.Tick() && time.Now().After(deadline) {
			return jetty.CR{}, fmt.Errorf("no completion in %v", waitLimit)
		}
	}
}

// expect returns the next record and checks that it is a successful
// send-side one of the given opcode.
func (s *side) expect(op urma.Opcode) (jetty.CR, error) {
	cr, err := s.next()
	if err != nil {
		return cr, fmt.Errorf("%s: %w", s.name, err)
	}
	if cr.Flags&jetty.CRRecv != 0 || cr.WROpcode != op {
		return cr, fmt.Errorf("%s: unexpected completion %v", s.name, cr)
	}
	return cr, nil
}

// serve answers count pings: each received message is sent back from the
// slot it landed in, and the slot is reposted once the pong's send has
// completed. The send record of a pong and the receive record of the next
// ping can arrive in either order.
func serve(s *side, count int) error {
	for done := 0; done < count; {
		cr, err := s.next()
		if err != nil {
			return fmt.Errorf("server: %w", err)
		}
		switch {
		case cr.Flags&jetty.CRRecv != 0 && cr.Opcode == jetty.CRSend:
			if int(cr.Len) != s.size {
				return fmt.Errorf("server: ping of %d bytes, want %d", cr.Len, s.size)
			}
			if err := s.jfs.Send(s.peer, s.slot(int(cr.UserCtx)), 0, cr.UserCtx); err != nil {
				return err
			}
		case cr.Flags&jetty.CRRecv == 0 && cr.WROpcode == urma.OpSend:
			if err := s.jfr.Recv(s.slot(int(cr.UserCtx)), cr.UserCtx); err != nil {
				return err
			}
			done++
		default:
			return fmt.Errorf("server: unexpected completion %v", cr)
		}
	}
	return nil
}

// ping sends count pings and waits for each pong, checking the sequence
// number it carries.
func ping(c *side, count int) error {
	buf, sge := c.sendBuf()
	for i := 0; i < count; i++ {
		if len(buf) >= 8 {
			binary.LittleEndian.PutUint64(buf, uint64(i))
		}
		if err := c.jfs.Send(c.peer, sge, 0, uint64(i)); err != nil {
			return err
		}
		// The send and the pong can complete in either order.
		var sent, got bool
		for !sent || !got {
			cr, err := c.next()
			if err != nil {
				return fmt.Errorf("client: %w", err)
			}
			switch {
			case cr.Flags&jetty.CRRecv == 0 && cr.WROpcode == urma.OpSend:
				sent = true
			case cr.Flags&jetty.CRRecv != 0 && cr.Opcode == jetty.CRSend:
				got = true
				pong := c.buf.Bytes()[int(cr.UserCtx)*c.size:][:cr.Len]
				if len(pong) >= 8 && binary.LittleEndian.Uint64(pong) != uint64(i) {
					return fmt.Errorf("client: pong %d carries sequence %d", i, binary.LittleEndian.Uint64(pong))
				}
				if err := c.jfr.Recv(c.slot(int(cr.UserCtx)), cr.UserCtx); err != nil {
					return err
				}
			default:
				return fmt.Errorf("client: unexpected completion %v", cr)
			}
		}
	}
	return nil
}

// connect hands each side the other's bundle (its JFR, and the server's
// segment, with their tokens) through a buffer, in the binary form two
// processes would swap over a connection (see examples/echo). Each side
// imports what it got and advises its JFS of the other's JFR.
func connect(srv, cli *side) error {
	var fromSrv, fromCli bootstrap.Bundle
	fromSrv.AddJFR("inbox", srv.jfr, jfrToken)
	fromSrv.AddSegment("mem", srv.mem, segToken)
	fromCli.AddJFR("inbox", cli.jfr, jfrToken)
	ctx := context.Background()
	var wire bytes.Buffer
	if err := errors.Join(bootstrap.Write(ctx, &wire, &fromSrv), bootstrap.Write(ctx, &wire, &fromCli)); err != nil {
		return err
	}
	atCli, err := bootstrap.Read(ctx, &wire)
	if err != nil {
		return err
	}
	atSrv, err := bootstrap.Read(ctx, &wire)
	if err != nil {
		return err
	}
	if cli.peer, err = atCli.Import(ctx, cli.ctx, "inbox"); err != nil {
		return err
	}
	if cli.target, err = atCli.ImportSegment(ctx, cli.ctx, "mem"); err != nil {
		return err
	}
	if srv.peer, err = atSrv.Import(ctx, srv.ctx, "inbox"); err != nil {
		return err
	}
	return errors.Join(srv.jfs.Advise(ctx, srv.peer), cli.jfs.Advise(ctx, cli.peer))
}

// oneSided lets the client WRITE a pattern into the server's segment and
// READ it back. An RM JFS names the imported server JFR as the target of
// one-sided requests too.
func oneSided(srv, cli *side, size int) error {
	local, err := segment.Alloc(cli.ctx, uint64(2*size), segment.Config{Access: segment.LocalOnly})
	if err != nil {
		return err
	}
	defer local.Unregister()
	src, dst := local.Bytes()[:size], local.Bytes()[size:]
	for i := range src {
		src[i] = byte(i*7 + 1)
	}
	if err := cli.jfs.Write(cli.peer, cli.target.SGE(0, uint32(size)), local.SGE(0, uint32(size)), 0, 1); err != nil {
		return err
	}
	if _, err := cli.expect(urma.OpWrite); err != nil {
		return err
	}
	if !bytes.Equal(srv.mem.Bytes(), src) {
		return errors.New("write: the server's segment does not hold the written bytes")
	}
	if err := cli.jfs.Read(cli.peer, cli.target.SGE(0, uint32(size)), local.SGE(uint64(size), uint32(size)), 0, 2); err != nil {
		return err
	}
	if _, err := cli.expect(urma.OpRead); err != nil {
		return err
	}
	if !bytes.Equal(dst, src) {
		return errors.New("read: the bytes read back differ")
	}
	return nil
}

// run sets up both sides, checks WRITE and READ, runs the ping-pong and
// prints a summary to w.
func run(w io.Writer, cfg config) (result, error) {
	var res result
	if cfg.count <= 0 || cfg.size <= 0 {
		return res, fmt.Errorf("-count and -size must be positive")
	}
	dev, err := findDevice(cfg)
	if err != nil {
		return res, err
	}
	if limit := dev.Attr().MaxMsgSize; uint64(cfg.size) > limit {
		return res, fmt.Errorf("-size %d above the device's max message size %d", cfg.size, limit)
	}
	// Server and client on different EIDs when the device has several.
	cliIndex := min(1, len(dev.EIDs())-1)
	srv, err := newSide("server", dev, 0, cfg)
	defer srv.close()
	if err != nil {
		return res, err
	}
	cli, err := newSide("client", dev, cliIndex, cfg)
	defer cli.close()
	if err != nil {
		return res, err
	}
	if srv.mem, err = segment.Alloc(srv.ctx, uint64(cfg.size), segment.Config{
		Access: segment.Read | segment.Write, TokenPolicy: segment.TokenPlainText, Token: segToken}); err != nil {
		return res, err
	}
	if err := connect(srv, cli); err != nil {
		return res, err
	}

	mode := "poll"
	if cfg.event {
		mode = "event"
	}
	fmt.Fprintf(w, "pingpong: %v, server %v, client %v, RM, %s mode\n", dev, srv.ctx.EID(), cli.ctx.EID(), mode)

	if err := oneSided(srv, cli, cfg.size); err != nil {
		return res, err
	}
	fmt.Fprintf(w, "write/read: %d bytes ok\n", cfg.size)

	done := make(chan error, 1)
	go func() { done <- serve(srv, cfg.count) }()
	start := time.Now()
	err = ping(cli, cfg.count)
	res.elapsed = time.Since(start)
	if err != nil {
		// Stop the server (closing its context makes it fail) and report
		// its error too, which is often the cause.
		_ = srv.ctx.Close()
		return res, errors.Join(err, <-done)
	}
	if err := <-done; err != nil {
		return res, err
	}
	if err := errors.Join(cli.close(), srv.close()); err != nil {
		return res, fmt.Errorf("cleanup: %w", err)
	}
	res.messages = 2 * cfg.count
	res.bytes = int64(res.messages) * int64(cfg.size)
	rtt := float64(res.elapsed.Nanoseconds()) / float64(cfg.count) / 1e3
	fmt.Fprintf(w, "messages: %d (%d round trips of %d bytes), bytes: %d\n", res.messages, cfg.count, cfg.size, res.bytes)
	fmt.Fprintf(w, "average round trip: %.2f µs\n", rtt)
	return res, nil
}
