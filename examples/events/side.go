package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/spin"
	"github.com/urma-go/sdk/urma"
)

const (
	slots      = 16 // receive buffers per side
	queueDepth = 64
	// waitLimit bounds the wait for one completion: a peer that stopped
	// answering is an error, not a hang.
	waitLimit = 10 * time.Second
	// ctxEvery is how many round trips pass between looks at the context:
	// with completions arriving at once Next never looks itself, and
	// Ctrl-C must still stop a long run.
	ctxEvery = 256
)

// side is one end for one mode: a context, its completions (with a JFCE
// in event mode), a JFS, a JFR, and a segment holding the receive slots
// followed by the send buffer.
type side struct {
	name  string
	ctx   *urma.Context
	comp  *exutil.Completions
	jfs   *jetty.JFS
	jfr   *jetty.JFR
	token uint32 // of our JFR, for the peer
	buf   *segment.Segment
	peer  *jetty.Remote // the other side's JFR
	size  int
}

// newSide sets up a side; on error the caller still closes what it got.
func newSide(name string, cfg config, eid, size int, event bool) (*side, error) {
	s := &side{name: name, size: size}
	var err error
	if s.ctx, err = exutil.Open(cfg.Provider, cfg.Dev, eid); err != nil {
		return s, err
	}
	// The JFC takes the records of both queues: depth >= JFS + JFR depth.
	if s.comp, err = exutil.NewCompletions(s.ctx, 2*queueDepth, event); err != nil {
		return s, err
	}
	if s.jfs, err = jetty.NewJFS(s.ctx, jetty.JFSConfig{Depth: queueDepth, Mode: urma.RM, JFC: s.comp.JFC}); err != nil {
		return s, err
	}
	if s.token, err = newToken(); err != nil {
		return s, err
	}
	if s.jfr, err = jetty.NewJFR(s.ctx, jetty.JFRConfig{Depth: queueDepth, Mode: urma.RM, JFC: s.comp.JFC,
		TokenPolicy: segment.TokenPlainText, Token: s.token}); err != nil {
		return s, err
	}
	if s.buf, err = segment.Alloc(s.ctx, uint64((slots+1)*size), segment.Config{Access: segment.LocalOnly}); err != nil {
		return s, err
	}
	// Receives are posted before the descriptor leaves, so that no
	// message can find the JFR empty.
	for i := range slots {
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

// close frees everything in URMA's order: the import, the queues, the JFC
// and JFCE, the memory, the context. Every Close is idempotent and
// nil-safe, so close also serves a half-built side.
func (s *side) close() error {
	if s == nil {
		return nil
	}
	return errors.Join(
		s.peer.Unimport(),
		s.jfs.Close(),
		s.jfr.Close(),
		s.comp.Close(),
		s.buf.Unregister(),
		s.ctx.Close(),
	)
}

// connect swaps bundles with the peer over conn, each with its JFR and
// the token that lets the peer SEND to it; it imports the peer's JFR and
// advises the JFS of it.
func (s *side) connect(ctx context.Context, conn io.ReadWriter) error {
	var mine bootstrap.Bundle
	mine.AddJFR("inbox", s.jfr, s.token)
	theirs, err := bootstrap.Exchange(ctx, conn, &mine)
	if err != nil {
		return err
	}
	if s.peer, err = theirs.Import(ctx, s.ctx, "inbox"); err != nil {
		return fmt.Errorf("import the peer's JFR: %w", err)
	}
	return s.jfs.Advise(ctx, s.peer)
}

func isSend(cr jetty.CR) bool { return cr.Flags&jetty.CRRecv == 0 && cr.WROpcode == urma.OpSend }
func isRecv(cr jetty.CR) bool { return cr.Flags&jetty.CRRecv != 0 && cr.Opcode == jetty.CRSend }

// serve answers count pings: each ping goes back as the pong from the slot
// it landed in, and the slot is reposted once that send has completed.
// The pong's send record and the next ping can come in either order.
func (s *side) serve(ctx context.Context, count int) error {
	for done, n := 0, 0; done < count; n++ {
		if n%ctxEvery == ctxEvery-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		cr, err := s.comp.Next(ctx, waitLimit)
		if err != nil {
			return err
		}
		if cr.UserCtx >= slots {
			return fmt.Errorf("completion of unknown slot: %v", cr)
		}
		switch slot := int(cr.UserCtx); {
		case isRecv(cr):
			if int(cr.Len) != s.size {
				return fmt.Errorf("ping of %d bytes, want %d", cr.Len, s.size)
			}
			if err := s.jfs.Send(s.peer, s.slot(slot), 0, cr.UserCtx); err != nil {
				return err
			}
		case isSend(cr):
			if err := s.jfr.Recv(s.slot(slot), cr.UserCtx); err != nil {
				return err
			}
			done++
		default:
			return fmt.Errorf("unexpected completion %v", cr)
		}
	}
	return nil
}

// ping sends count pings, each after the previous pong and a pause of
// interval, and appends to samples the time from posting each ping to
// polling its pong. The pong carries the ping's sequence number back.
func (s *side) ping(ctx context.Context, count int, interval time.Duration, samples []time.Duration) ([]time.Duration, error) {
	buf, sge := s.sendBuf()
	for i := range count {
		if i%ctxEvery == ctxEvery-1 {
			if err := ctx.Err(); err != nil {
				return samples, err
			}
		}
		if interval > 0 && i > 0 {
			if err := s.pause(ctx, interval); err != nil {
				return samples, err
			}
		}
		if len(buf) >= 8 {
			binary.LittleEndian.PutUint64(buf, uint64(i))
		}
		start := time.Now()
		if err := s.jfs.Send(s.peer, sge, 0, 0); err != nil {
			return samples, err
		}
		// The send's record and the pong can come in either order; the
		// send buffer is reused only after both.
		for sent, got := false, false; !sent || !got; {
			cr, err := s.comp.Next(ctx, waitLimit)
			if err != nil {
				return samples, err
			}
			switch {
			case isSend(cr):
				sent = true
			case isRecv(cr) && cr.UserCtx < slots:
				samples = append(samples, time.Since(start))
				got = true
				if int(cr.Len) != s.size {
					return samples, fmt.Errorf("pong of %d bytes, want %d", cr.Len, s.size)
				}
				pong := s.buf.Bytes()[int(cr.UserCtx)*s.size:][:s.size]
				if len(pong) >= 8 && binary.LittleEndian.Uint64(pong) != uint64(i) {
					return samples, fmt.Errorf("pong %d carries sequence %d", i, binary.LittleEndian.Uint64(pong))
				}
				if err := s.jfr.Recv(s.slot(int(cr.UserCtx)), cr.UserCtx); err != nil {
					return samples, err
				}
			default:
				return samples, fmt.Errorf("unexpected completion %v", cr)
			}
		}
	}
	return samples, nil
}

// pause is the client's idle time between round trips, spent the way the
// side waits for anything: a polling side spins through it (as a
// run-to-completion loop would, and without a timer that needs another
// thread woken), an event side sleeps.
func (s *side) pause(ctx context.Context, d time.Duration) error {
	if s.comp.Event() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	start := time.Now()
	var pace spin.Pacer
	for time.Since(start) < d {
		if pace.Tick() && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}
