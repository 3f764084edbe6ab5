package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// client holds a JFS, the memory its WRITEs take their bytes from, and
// what it imported of the server.
type client struct {
	uctx   *urma.Context
	cq     *exutil.Completions
	jfs    *jetty.JFS
	local  *segment.Segment
	owner  *jetty.Remote
	target *segment.Target
}

func (c *client) close() error {
	var errs []error
	if c.target != nil {
		errs = append(errs, c.target.Unimport())
	}
	if c.owner != nil {
		errs = append(errs, c.owner.Unimport())
	}
	if c.jfs != nil {
		errs = append(errs, c.jfs.Close())
	}
	errs = append(errs, c.cq.Close())
	if c.local != nil {
		errs = append(errs, c.local.Unregister())
	}
	if c.uctx != nil {
		errs = append(errs, c.uctx.Close())
	}
	return errors.Join(errs...)
}

// write WRITEs msg to the start of the server's segment and returns its
// record, with the record's error if it failed.
func (c *client) write(ctx context.Context, msg string) (jetty.CR, error) {
	n := uint32(copy(c.local.Bytes(), msg))
	if err := c.jfs.Write(c.owner, c.target.SGE(0, n), c.local.SGE(0, n), jetty.Signaled, 0); err != nil {
		return jetty.CR{}, err
	}
	return c.cq.Next(ctx, waitLimit)
}

// importFrom imports the server's JFR (the first time) and segment from b.
func (c *client) importFrom(ctx context.Context, b *bootstrap.Bundle) error {
	var err error
	if c.owner == nil {
		if c.owner, err = b.Import(ctx, c.uctx, "owner"); err != nil {
			return err
		}
	}
	c.target, err = b.ImportSegment(ctx, c.uctx, "mem")
	return err
}

// runClient connects to the server at addr and runs the story: a WRITE,
// a WRITE that fails, the recovery, a WRITE into the new segment.
func runClient(ctx context.Context, w io.Writer, cfg exutil.Common, addr string) (err error) {
	c := &client{}
	defer func() { err = errors.Join(err, c.close()) }()
	eid, err := cfg.EIDFor(true)
	if err != nil {
		return err
	}
	if c.uctx, err = exutil.Open(cfg.Provider, cfg.Dev, eid); err != nil {
		return err
	}
	if c.cq, err = exutil.NewCompletions(c.uctx, 16, cfg.Event()); err != nil {
		return err
	}
	if c.jfs, err = jetty.NewJFS(c.uctx, jetty.JFSConfig{Depth: 8, JFC: c.cq.JFC}); err != nil {
		return err
	}
	if c.local, err = segment.Alloc(c.uctx, memSize, segment.Config{Access: segment.LocalOnly}); err != nil {
		return err
	}
	conn, err := exutil.Dial(ctx, addr, waitLimit)
	if err != nil {
		return fmt.Errorf("connect to the server at %s: %w", addr, err)
	}
	defer conn.Close()
	in := bufio.NewReader(conn) // bundles and answers, in turn
	b, err := bootstrap.Read(ctx, in)
	if err != nil {
		return err
	}
	if err := c.importFrom(ctx, b); err != nil {
		return err
	}
	ask := func(line string) error {
		if _, err := fmt.Fprintln(conn, line); err != nil {
			return err
		}
		_, err := in.ReadString('\n')
		return err
	}
	fmt.Fprintf(w, "client: %s/%s, eid %v, connected to %s\n", c.uctx.Device().Provider(), c.uctx.Device().Name(), c.uctx.EID(), addr)

	// A WRITE that works.
	const first, last = "before the error", "after the recovery"
	if _, err := c.write(ctx, first); err != nil {
		return err
	}
	fmt.Fprintf(w, "client: WRITE %q: ok\n", first)
	if err := ask(fmt.Sprintf("show %d", len(first))); err != nil {
		return err
	}

	// The server unregisters the segment: the next WRITE fails remotely.
	if err := ask("drop"); err != nil {
		return err
	}
	cr, werr := c.write(ctx, "into memory that is gone")
	var crErr *jetty.CRError
	if !errors.As(werr, &crErr) {
		return fmt.Errorf("the WRITE into an unregistered segment: want a failed record, got %v (%v)", werr, cr)
	}
	fmt.Fprintf(w, "client: WRITE into the unregistered segment: failed with %v\n", cr.Status)
	if err := c.recover(ctx, w); err != nil {
		return err
	}

	// The server registers another segment; the client imports it and
	// goes on with the same JFS.
	if _, err := fmt.Fprintln(conn, "new"); err != nil {
		return err
	}
	if b, err = bootstrap.Read(ctx, in); err != nil {
		return err
	}
	if err := c.target.Unimport(); err != nil {
		return err
	}
	c.target = nil
	if err := c.importFrom(ctx, b); err != nil {
		return err
	}
	if _, err := c.write(ctx, last); err != nil {
		return err
	}
	fmt.Fprintf(w, "client: WRITE %q into the new segment: ok\n", last)
	if err := ask(fmt.Sprintf("show %d", len(last))); err != nil {
		return err
	}
	_, err = fmt.Fprintln(conn, "bye")
	return err
}

// recover brings the JFS back from ERROR: the async event its failure
// raised is read and acked, what it still held is flushed, and a reset
// makes it READY again.
func (c *client) recover(ctx context.Context, w io.Writer) error {
	attr, err := c.jfs.Query()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "client: the JFS is %v\n", attr.State)
	evCtx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	ev, err := c.uctx.GetAsyncEvent(evCtx)
	if err != nil {
		return fmt.Errorf("the async event of the JFS's failure: %w", err)
	}
	if ev.Object != c.jfs {
		return fmt.Errorf("async event %v of %T, not of the JFS", ev.Type, ev.Object)
	}
	if err := ev.Ack(); err != nil {
		return err
	}
	fmt.Fprintf(w, "client: async event %v on the JFS, acked\n", ev.Type)
	crs := make([]jetty.CR, 8)
	n, err := c.jfs.Flush(crs)
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintln(w, "client: flushed nothing: no other request was queued")
	} else {
		var statuses []string
		for _, cr := range crs[:n] {
			statuses = append(statuses, cr.Status.String())
		}
		fmt.Fprintf(w, "client: flushed %d requests (%s)\n", n, strings.Join(statuses, " "))
	}
	if err := c.jfs.Modify(urma.StateReset); err != nil {
		return err
	}
	if err := c.jfs.Modify(urma.StateReady); err != nil {
		return err
	}
	attr, err = c.jfs.Query()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "client: reset, the JFS is %v again\n", attr.State)
	return nil
}
