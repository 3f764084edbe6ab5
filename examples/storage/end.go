package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// end is what the server and the client both have: a context, a JFC, an
// RM JFS and JFR, receive slots and a send buffer in one segment, and the
// other end's JFR imported.
type end struct {
	name  string
	ctx   *urma.Context
	cq    *exutil.Completions
	jfs   *jetty.JFS
	jfr   *jetty.JFR
	msgs  *segment.Segment
	slot  int // size of a receive slot
	send  int // size of the send buffer
	token uint32
	// peerToken protects the other end's JFR and segments.
	peerToken uint32
	peer      *jetty.Remote
	// early holds messages that arrived while a send-side record was
	// awaited: a response can overtake the completion of its request.
	early [][]byte
}

const (
	recvSlots = 4
	depth     = 16
	waitLimit = 30 * time.Second
	sendCtx   = 1 << 32 // receive slots use their index
	rdmaCtx   = sendCtx + 1
)

func newEnd(name string, c exutil.Common, eid, slot, send int) (*end, error) {
	e := &end{name: name, slot: slot, send: send, token: rand.Uint32() | 1}
	var err error
	if e.ctx, err = exutil.Open(c.Provider, c.Dev, eid); err != nil {
		return nil, err
	}
	if e.cq, err = exutil.NewCompletions(e.ctx, 2*depth+recvSlots, c.Event()); err != nil {
		return e, err
	}
	if e.jfs, err = jetty.NewJFS(e.ctx, jetty.JFSConfig{Depth: depth, Mode: urma.RM, JFC: e.cq.JFC}); err != nil {
		return e, err
	}
	if e.jfr, err = jetty.NewJFR(e.ctx, jetty.JFRConfig{Depth: recvSlots, Mode: urma.RM, JFC: e.cq.JFC,
		TokenPolicy: segment.TokenPlainText, Token: e.token}); err != nil {
		return e, err
	}
	if e.msgs, err = segment.Alloc(e.ctx, uint64(recvSlots*slot+send), segment.Config{Access: segment.LocalOnly}); err != nil {
		return e, err
	}
	for i := range recvSlots {
		if err := e.jfr.Recv(e.msgs.SGE(uint64(i*slot), uint32(slot)), uint64(i)); err != nil {
			return e, err
		}
	}
	return e, nil
}

// sendBuf is where the next message is built.
func (e *end) sendBuf() []byte { return e.msgs.Bytes()[recvSlots*e.slot:][:e.send] }

// connect swaps bundles with the other end over c: each sends its JFR and
// the token that protects it and its views. It imports the other end's
// JFR.
func (e *end) connect(ctx context.Context, c io.ReadWriter) error {
	var mine bootstrap.Bundle
	mine.AddJFR("inbox", e.jfr, e.token)
	theirs, err := bootstrap.Exchange(ctx, c, &mine)
	if err != nil {
		return err
	}
	inbox, err := theirs.Lookup("inbox")
	if err != nil {
		return err
	}
	e.peerToken = inbox.Token
	if e.peer, err = theirs.Import(ctx, e.ctx, "inbox"); err != nil {
		return err
	}
	return e.jfs.Advise(ctx, e.peer)
}

// sendMsg SENDs the first n bytes of the send buffer and waits for it.
func (e *end) sendMsg(ctx context.Context, n int) error {
	sge := e.msgs.SGE(uint64(recvSlots*e.slot), uint32(n))
	if err := e.jfs.Send(e.peer, sge, 0, sendCtx); err != nil {
		return err
	}
	return e.wait(ctx, sendCtx)
}

// wait waits for the send-side record with user context want, keeping
// messages that arrive meanwhile for recvMsg.
func (e *end) wait(ctx context.Context, want uint64) error {
	for {
		cr, err := e.cq.Next(ctx, waitLimit)
		if err != nil {
			return err
		}
		if cr.Flags&jetty.CRRecv != 0 {
			m, err := e.take(cr)
			if err != nil {
				return err
			}
			e.early = append(e.early, m)
			continue
		}
		if cr.UserCtx != want {
			return fmt.Errorf("%s: unexpected completion %v", e.name, cr)
		}
		return nil
	}
}

// recvMsg returns the next message.
func (e *end) recvMsg(ctx context.Context, limit time.Duration) ([]byte, error) {
	if len(e.early) > 0 {
		m := e.early[0]
		e.early = e.early[1:]
		return m, nil
	}
	cr, err := e.cq.Next(ctx, limit)
	if err != nil {
		return nil, err
	}
	if cr.Flags&jetty.CRRecv == 0 {
		return nil, fmt.Errorf("%s: unexpected completion %v", e.name, cr)
	}
	return e.take(cr)
}

// take copies a received message out of its slot and posts the slot again.
func (e *end) take(cr jetty.CR) ([]byte, error) {
	i := int(cr.UserCtx)
	m := append([]byte{}, e.msgs.Bytes()[i*e.slot:][:cr.Len]...)
	return m, e.jfr.Recv(e.msgs.SGE(uint64(i*e.slot), uint32(e.slot)), cr.UserCtx)
}

func (e *end) close() error {
	if e == nil {
		return nil
	}
	return joinErr(e.peer.Close(), e.jfs.Close(), e.jfr.Close(), e.cq.Close(), e.msgs.Close(), e.ctx.Close())
}
