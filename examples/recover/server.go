package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

const (
	memSize   = 4096
	token     = 0x7ec0
	waitLimit = 10 * time.Second
)

// server holds a JFR (a one-sided request in RM mode names one of the
// owner's) and the segment the client writes into, which it can replace.
type server struct {
	uctx *urma.Context
	jfc  *jetty.JFC
	jfr  *jetty.JFR
	mem  *segment.Segment
}

func (s *server) close() error {
	var errs []error
	if s.jfr != nil {
		errs = append(errs, s.jfr.Close())
	}
	if s.jfc != nil {
		errs = append(errs, s.jfc.Close())
	}
	if s.mem != nil {
		errs = append(errs, s.mem.Unregister())
	}
	if s.uctx != nil {
		errs = append(errs, s.uctx.Close())
	}
	return errors.Join(errs...)
}

// bundle is the segment and the JFR, for the client.
func (s *server) bundle() *bootstrap.Bundle {
	var b bootstrap.Bundle
	b.AddSegment("mem", s.mem, token)
	b.AddJFR("owner", s.jfr, token)
	return &b
}

func (s *server) register() (err error) {
	s.mem, err = segment.Alloc(s.uctx, memSize, segment.Config{Access: segment.Read | segment.Write,
		TokenPolicy: segment.TokenPlainText, Token: token})
	return err
}

// serve serves one client on l, which it closes. The client names each
// step on the connection: "show N" (what its segment holds), "drop"
// (unregister it), "new" (register another and send its bundle), "bye".
func serve(ctx context.Context, w io.Writer, cfg exutil.Common, l net.Listener) (err error) {
	defer l.Close()
	s := &server{}
	defer func() { err = errors.Join(err, s.close()) }()
	eid, err := cfg.EIDFor(false)
	if err != nil {
		return err
	}
	if s.uctx, err = exutil.Open(cfg.Provider, cfg.Dev, eid); err != nil {
		return err
	}
	if s.jfc, err = jetty.NewJFC(s.uctx, jetty.JFCConfig{Depth: 16}); err != nil {
		return err
	}
	if s.jfr, err = jetty.NewJFR(s.uctx, jetty.JFRConfig{Depth: 8, JFC: s.jfc, TokenPolicy: segment.TokenPlainText, Token: token}); err != nil {
		return err
	}
	if err := s.register(); err != nil {
		return err
	}
	fmt.Fprintf(w, "server: %s/%s, eid %v, waiting on %s\n", s.uctx.Device().Provider(), s.uctx.Device().Name(), s.uctx.EID(), l.Addr())
	conn, err := exutil.Accept(ctx, l)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := bootstrap.Write(ctx, conn, s.bundle()); err != nil {
		return err
	}
	lines := bufio.NewScanner(conn)
	for lines.Scan() {
		var n int
		line := lines.Text()
		switch {
		case line == "bye":
			return nil
		case line == "drop":
			if err := s.mem.Unregister(); err != nil {
				return err
			}
			s.mem = nil
			fmt.Fprintln(w, "server: unregistered its segment")
			_, err = fmt.Fprintln(conn, "dropped")
		case line == "new":
			if err := s.register(); err != nil {
				return err
			}
			fmt.Fprintln(w, "server: registered a new segment")
			err = bootstrap.Write(ctx, conn, s.bundle())
		case scan(line, "show %d", &n) && s.mem != nil && n <= memSize:
			fmt.Fprintf(w, "server: finds %q in its segment\n", s.mem.Bytes()[:n])
			_, err = fmt.Fprintln(conn, "shown")
		default:
			return fmt.Errorf("the client asked for %q", line)
		}
		if err != nil {
			return err
		}
	}
	if err := lines.Err(); err != nil {
		return err
	}
	return fmt.Errorf("the client left without saying bye")
}

// scan is fmt.Sscanf that reports whether the whole pattern matched.
func scan(s, format string, args ...any) bool {
	n, err := fmt.Sscanf(s, format, args...)
	return err == nil && n == len(args)
}
