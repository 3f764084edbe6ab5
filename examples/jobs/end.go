package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// The layout of each side's segment: receive slots, then the bytes that
// SENDs and WRITEs take, then (the server's) where the client WRITEs,
// what it READs and the word of the atomics; on the client the same
// offsets hold what its READ brought and what its atomics returned.
const (
	slotSize = 256
	slots    = 8
	sendOff  = slots * slotSize
	writeOff = sendOff + slotSize
	readOff  = writeOff + slotSize
	wordOff  = readOff + slotSize
	memSize  = wordOff + 64

	// The token of both sides' segment and JFR travels in the bundles.
	token     = 0x10b5
	waitLimit = 10 * time.Second
)

// end is one side: its context, completions, a JFS, a JFR with a receive
// posted in every slot, its segment, and what it imported of the other
// side.
type end struct {
	uctx   *urma.Context
	cq     *exutil.Completions
	jfs    *jetty.JFS
	jfr    *jetty.JFR
	mem    *segment.Segment
	peer   *jetty.Remote   // the other side's JFR
	target *segment.Target // the server's segment, on the client
}

// newEnd opens a side on the device cfg names (the client's EID when
// client is set).
func newEnd(cfg config, client bool) (_ *end, err error) {
	e := &end{}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.close())
		}
	}()
	eid, err := cfg.EIDFor(client)
	if err != nil {
		return e, err
	}
	if e.uctx, err = exutil.Open(cfg.Provider, cfg.Dev, eid); err != nil {
		return e, err
	}
	// The JFC takes both queues' records: its depth covers both.
	if e.cq, err = exutil.NewCompletions(e.uctx, 2*slots+16, cfg.Event()); err != nil {
		return e, err
	}
	mode := urma.RM
	if cfg.um {
		mode = urma.UM
	}
	if e.jfs, err = jetty.NewJFS(e.uctx, jetty.JFSConfig{Depth: 16, Mode: mode, JFC: e.cq.JFC}); err != nil {
		return e, err
	}
	if e.jfr, err = jetty.NewJFR(e.uctx, jetty.JFRConfig{Depth: slots, Mode: mode, JFC: e.cq.JFC,
		TokenPolicy: segment.TokenPlainText, Token: token}); err != nil {
		return e, err
	}
	if e.mem, err = segment.Alloc(e.uctx, memSize, segment.Config{Access: segment.Read | segment.Write | segment.Atomic,
		TokenPolicy: segment.TokenPlainText, Token: token}); err != nil {
		return e, err
	}
	for i := range slots {
		if err = e.jfr.Recv(e.mem.SGE(uint64(i*slotSize), slotSize), uint64(i)); err != nil {
			return e, err
		}
	}
	return e, nil
}

// bundle is what the other side needs of this one.
func (e *end) bundle() *bootstrap.Bundle {
	var b bootstrap.Bundle
	b.AddSegment("mem", e.mem, token)
	b.AddJFR("inbox", e.jfr, token)
	return &b
}

// importPeer imports the other side's JFR and, for the client, its
// segment.
func (e *end) importPeer(ctx context.Context, b *bootstrap.Bundle, client bool) error {
	var err error
	if e.peer, err = b.Import(ctx, e.uctx, "inbox"); err != nil {
		return err
	}
	if client {
		e.target, err = b.ImportSegment(ctx, e.uctx, "mem")
	}
	return err
}

// next waits for the next record; one that failed is an error naming it.
func (e *end) next(ctx context.Context) (jetty.CR, error) {
	cr, err := e.cq.Next(ctx, waitLimit)
	if err != nil {
		return cr, e.cq.Explain(err)
	}
	return cr, nil
}

// await waits for a record that satisfies want; records in between are an
// error, as this side runs one job at a time.
func (e *end) await(ctx context.Context, what string, want func(*jetty.CR) bool) (jetty.CR, error) {
	cr, err := e.next(ctx)
	if err != nil {
		return cr, fmt.Errorf("%s: %w", what, err)
	}
	if !want(&cr) {
		return cr, fmt.Errorf("%s: got %v instead", what, cr)
	}
	return cr, nil
}

// sent waits for the record of this side's request.
func (e *end) sent(ctx context.Context, op urma.Opcode) error {
	_, err := e.await(ctx, "the record of "+op.String(), func(cr *jetty.CR) bool {
		return cr.Flags&jetty.CRRecv == 0 && cr.WROpcode == op
	})
	return err
}

// received waits for a receive of opcode op, takes what it received and
// posts the slot again.
func (e *end) received(ctx context.Context, op jetty.CROpcode) (jetty.CR, string, error) {
	cr, err := e.await(ctx, "a receive of "+op.String(), func(cr *jetty.CR) bool {
		return cr.Flags&jetty.CRRecv != 0 && cr.Opcode == op
	})
	if err != nil {
		return cr, "", err
	}
	off := cr.UserCtx * slotSize
	msg := string(e.mem.Bytes()[off : off+uint64(cr.Len)])
	return cr, msg, e.jfr.Recv(e.mem.SGE(off, slotSize), cr.UserCtx)
}

// put copies s to the send bytes and returns their SGE.
func (e *end) put(s string) segment.SGE {
	n := copy(e.mem.Bytes()[sendOff:writeOff], s)
	return e.mem.SGE(sendOff, uint32(n))
}

// word is the 8-byte word of the atomics at wordOff: on the server the
// word they change, on the client where their old value lands.
func (e *end) word() (*atomic.Uint64, error) { return e.mem.Uint64(wordOff) }

// close releases the side's objects, children first. Nil-safe.
func (e *end) close() error {
	if e == nil {
		return nil
	}
	var errs []error
	if e.peer != nil {
		errs = append(errs, e.peer.Close())
	}
	if e.target != nil {
		errs = append(errs, e.target.Close())
	}
	if e.jfs != nil {
		errs = append(errs, e.jfs.Close())
	}
	if e.jfr != nil {
		errs = append(errs, e.jfr.Close())
	}
	errs = append(errs, e.cq.Close())
	if e.mem != nil {
		errs = append(errs, e.mem.Unregister())
	}
	if e.uctx != nil {
		errs = append(errs, e.uctx.Close())
	}
	return errors.Join(errs...)
}
