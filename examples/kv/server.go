package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// server is what outlives sessions: the context, the table, and the JFR
// that clients' RM JFSs name as their Target.
type server struct {
	cfg      config
	out      io.Writer
	ctx      *urma.Context
	jfc      *jetty.JFC
	jfr      *jetty.JFR
	jfrToken uint32
	table    *table
	sessions int
	last     workerCounts // the last session's, once it said done
}

// maxRegion bounds a session's request region.
const maxRegion = 1 << 30

var errClientLeft = errors.New("the client left without saying done")

// newServer opens the context and the JFR that outlive sessions.
func newServer(cfg config, out io.Writer) (s *server, err error) {
	s = &server{cfg: cfg, out: out, table: newTable(), jfrToken: rand.Uint32() | 1}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.close())
		}
	}()
	eid, err := cfg.EIDFor(false)
	if err != nil {
		return nil, err
	}
	if s.ctx, err = exutil.Open(cfg.Provider, cfg.Dev, eid); err != nil {
		return nil, err
	}
	if s.jfc, err = jetty.NewJFC(s.ctx, jetty.JFCConfig{Depth: 16}); err != nil {
		return nil, err
	}
	if s.jfr, err = jetty.NewJFR(s.ctx, jetty.JFRConfig{Depth: 1, JFC: s.jfc,
		TokenPolicy: segment.TokenPlainText, Token: s.jfrToken}); err != nil {
		return nil, err
	}
	return s, nil
}

// close frees what newServer made. Nil-safe.
func (s *server) close() error {
	if s == nil {
		return nil
	}
	return errors.Join(s.jfr.Close(), s.jfc.Close(), s.ctx.Close())
}

// serve answers sessions on l, one at a time, until ctx is done; with once
// it returns after the first. It closes l.
func (s *server) serve(ctx context.Context, l net.Listener, once bool) error {
	defer l.Close()
	fmt.Fprintf(s.out, "kv: server listening on %s (%v, EID %v, %d workers, %s mode)\n",
		l.Addr(), s.ctx.Device(), s.ctx.EID(), s.cfg.workers, s.cfg.Mode)
	for {
		conn, err := exutil.Accept(ctx, l)
		if err != nil {
			return err
		}
		s.sessions++
		err = s.session(ctx, conn)
		_ = conn.Close()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case once:
			return err
		case err != nil:
			fmt.Fprintf(s.out, "kv: session %d ended: %v\n", s.sessions, err)
		}
	}
}

// session serves one client process: hello, answer, requests until its
// done, done.
func (s *server) session(ctx context.Context, conn net.Conn) (err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(sctx, func() { _ = conn.Close() })()
	h, clients, err := readHello(sctx, conn)
	if err != nil {
		return err
	}
	err = checkSession(len(clients.Entries), int(h.Window), int(h.Value))
	if err == nil {
		err = checkRegion(s.cfg.workers, len(clients.Entries), int(h.Window), int(h.Value))
	}
	if err != nil {
		return errors.Join(err, writeReason(conn, err.Error()))
	}
	ss, err := s.newSession(h, clients)
	defer func() { err = errors.Join(err, ss.close()) }()
	if err != nil {
		return errors.Join(err, writeReason(conn, err.Error()))
	}
	var mine bootstrap.Bundle
	mine.AddSegment("region", ss.region, ss.regionToken)
	mine.AddJFR("server", s.jfr, s.jfrToken)
	for i, w := range ss.workers {
		if w.bell != nil {
			mine.AddJFR(bellName(i), w.bell.jfr, w.bell.token)
		}
	}
	if err := errors.Join(writeReason(conn, ""), bootstrap.Write(sctx, conn, &mine)); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "kv: session %d: %d clients, window %d, value %d B, region of %d slots, %d B\n",
		s.sessions, ss.clients, ss.window, ss.value, ss.region.Len()/uint64(ss.slot), ss.region.Len())

	// A failing worker cancels the session, which closes the connection
	// and so ends the wait for done; done stops the workers only.
	wctx, stop := context.WithCancel(sctx)
	defer stop()
	var wg sync.WaitGroup
	errs := make([]error, len(ss.workers))
	for i, wk := range ss.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = wk.run(wctx); errs[i] != nil {
				cancel()
			}
		}()
	}
	var sent uint64
	err = binary.Read(conn, binary.BigEndian, &sent)
	// Every request is answered once the client says done; stop the
	// workers before counting.
	stop()
	wg.Wait()
	if werr := errors.Join(errs...); werr != nil {
		return werr
	}
	if err != nil {
		return fmt.Errorf("%w: %w", errClientLeft, err)
	}
	var c workerCounts
	for _, wk := range ss.workers {
		// Rings whose records came after the worker's last drain
		// are counted too.
		if _, err := wk.bell.drain(); err != nil {
			return err
		}
		c.add(wk.stats())
	}
	s.last = c
	fmt.Fprintf(s.out, "kv: session %d: served %d requests (%d GET, %d PUT, %d bad), client sent %d, table holds %d keys\n",
		s.sessions, c.served(), c.gets, c.puts, c.bad, sent, s.table.len())
	if ss.workers[0].bell != nil {
		fmt.Fprintf(s.out, "kv: session %d: the workers took %d doorbells and slept on their JFCE %d times (-spin %v)\n",
			s.sessions, c.rings, c.sleeps, s.cfg.spin)
	}
	if err := binary.Write(conn, binary.BigEndian, c.served()); err != nil {
		return err
	}
	// The client frees its side first and then hangs up; only then does
	// the session free its own. Both at once would tear down the two ends
	// of every connection at the same time, and provider/ib can then
	// destroy a connection twice (its rdma_cm goroutine handling the
	// peer's disconnect while a Close drops the same connection).
	_ = conn.SetReadDeadline(time.Now().Add(waitLimit))
	_, _ = conn.Read(make([]byte, 1))
	return nil
}

// readHello reads a client's hello and the bundle of its JFRs. A
// connection that never says hello must not hold the server: it has
// waitLimit.
func readHello(ctx context.Context, conn net.Conn) (h hello, clients *bootstrap.Bundle, err error) {
	ctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	deadline, _ := ctx.Deadline()
	_ = conn.SetReadDeadline(deadline)
	defer func() { _ = conn.SetReadDeadline(time.Time{}) }()
	if err := binary.Read(conn, binary.BigEndian, &h); err != nil {
		return h, nil, err
	}
	clients, err = bootstrap.Read(ctx, conn)
	return h, clients, err
}

// checkRegion refuses sessions whose request region would be too large.
func checkRegion(workers, clients, window, value int) error {
	if n := uint64(workers) * uint64(clients) * uint64(window) * uint64(slotSize(value)); n > maxRegion {
		return fmt.Errorf("a request region of %d MiB for %d workers, %d clients, window %d and %d-byte values; limit %d MiB",
			n>>20, workers, clients, window, value, maxRegion>>20)
	}
	return nil
}

// session holds what serves one client process: the request region, the
// response buffers (one per request slot: a slot's next request comes
// only after its response arrived, so its buffer is free again) and the
// workers.
type session struct {
	srv                                *server
	clients, window, value, slot, resp int
	regionToken                        uint32
	region, resps                      *segment.Segment
	workers                            []*worker
}

func (s *server) newSession(h hello, clients *bootstrap.Bundle) (*session, error) {
	ss := &session{srv: s, clients: len(clients.Entries), window: int(h.Window), value: int(h.Value),
		slot: slotSize(int(h.Value)), resp: respSize(int(h.Value)), regionToken: rand.Uint32() | 1}
	slots := s.cfg.workers * ss.clients * ss.window
	var err error
	if ss.region, err = segment.Alloc(s.ctx, uint64(slots*ss.slot), segment.Config{Access: segment.Read | segment.Write,
		TokenPolicy: segment.TokenPlainText, Token: ss.regionToken}); err != nil {
		return ss, err
	}
	// The polled word must be aligned for an atomic load.
	if uintptr(unsafe.Pointer(&ss.region.Bytes()[0]))%8 != 0 {
		return ss, errors.New("the request region is not 8-byte aligned")
	}
	if ss.resps, err = segment.Alloc(s.ctx, uint64(slots*ss.resp), segment.Config{Access: segment.LocalOnly}); err != nil {
		return ss, err
	}
	for i := range s.cfg.workers {
		w, err := newWorker(ss, i, clients)
		ss.workers = append(ss.workers, w)
		if err != nil {
			return ss, err
		}
	}
	return ss, nil
}

// close frees the session in URMA's order: the workers' imports and
// queues, then the memory. Nil-safe.
func (ss *session) close() error {
	if ss == nil {
		return nil
	}
	var errs []error
	for _, w := range ss.workers {
		errs = append(errs, w.close())
	}
	return errors.Join(errors.Join(errs...), ss.resps.Unregister(), ss.region.Unregister())
}
