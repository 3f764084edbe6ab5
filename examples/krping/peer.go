package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/rdmacm"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// peer is one end of a krping connection: an RC Jetty bound to the other
// end's, one JFC, two receive slots and a send slot for advertisements,
// and the two ping buffers: start (the client's source, which the server
// READs) and rdma (the server's copy, and the client's sink, which the
// server WRITEs).
type peer struct {
	name  string
	dev   string
	ctx   *urma.Context
	cq    *exutil.Completions
	jetty *jetty.Jetty
	// remote is the other end's Jetty, bound.
	remote *jetty.Remote
	// cm is the connection to an rping peer (the rping option), which
	// stands in for remote.
	cm *rdmacm.Conn
	// ctl holds the receive slots and a send slot, adSize each.
	ctl *segment.Segment
	// start and rdma are the ping buffers, each its own segment so that an
	// advertisement names a whole segment.
	start, rdma *segment.Segment
	token       uint32
	// peerToken and peerID, from the other end's bundle, let this end
	// import what the other advertises.
	peerToken uint32
	peerID    jetty.Descriptor
	imports   map[ad]*segment.Target
	// early holds a message that arrived while this end waited for
	// something else (the next advertisement can overtake the completion
	// of the "go ahead" that prompted it).
	early [][]byte
	stats stats
}

// waitLimit bounds one wait for a completion; the out-of-band connection
// and Ctrl-C end waits sooner.
const waitLimit = 24 * time.Hour

// segAccess is what the krping loop lets the peer do with each buffer:
// the server READs the client's start buffer and WRITEs its rdma buffer;
// wlat WRITEs the peer's start buffer.
var segAccess = segment.Read | segment.Write

// newPeer opens the context and creates the queues and the control
// buffers; the ping buffers come once the size is agreed (buffers).
func newPeer(name string, o options, prov, dev string, eid int) (*peer, error) {
	p := &peer{name: name, dev: dev, token: rand.Uint32() | 1, imports: map[ad]*segment.Target{}}
	var err error
	if p.ctx, err = exutil.Open(prov, dev, eid); err != nil {
		return nil, err
	}
	// The JFC takes the records of both queues of the Jetty.
	const recvDepth = 16
	if p.cq, err = exutil.NewCompletions(p.ctx, o.txdepth+2+recvDepth, !o.poll); err != nil {
		return p, err
	}
	if p.jetty, err = jetty.NewJetty(p.ctx, jetty.JettyConfig{
		Send: jetty.JFSConfig{Depth: o.txdepth + 2, Mode: urma.RC, JFC: p.cq.JFC},
		Recv: jetty.JFRConfig{Depth: recvDepth, TokenPolicy: segment.TokenPlainText, Token: p.token},
	}); err != nil {
		return p, err
	}
	if p.ctl, err = segment.Alloc(p.ctx, (recvSlots+1)*adSize, segment.Config{Access: segment.LocalOnly}); err != nil {
		return p, err
	}
	for i := range recvSlots {
		if err := p.jetty.Recv(p.slot(i), uint64(i)); err != nil {
			return p, err
		}
	}
	return p, nil
}

func (p *peer) slot(i int) segment.SGE { return p.ctl.SGE(uint64(i*adSize), adSize) }

// testSize is the client's test, sent ahead of its bundle: test u8,
// count u32, size u32, which a server that was not told otherwise follows.
const testSize = 1 + 4 + 4

// Test codes of the client's test.
var testCodes = []string{"ping", "wlat", "rlat", "bw", "bw duplex"}

// marshalTest is the encoder parseTest undoes.
func marshalTest(test string, count, size int) []byte {
	code := 0
	for i, name := range testCodes {
		if name == test {
			code = i
		}
	}
	b := binary.BigEndian.AppendUint32([]byte{byte(code)}, uint32(count))
	return binary.BigEndian.AppendUint32(b, uint32(size))
}

// parseTest decodes the client's test.
func parseTest(b []byte) (test string, count, size int, err error) {
	if len(b) != testSize || int(b[0]) >= len(testCodes) {
		return "", 0, 0, fmt.Errorf("not a krping test: %x", b)
	}
	count, size = int(binary.BigEndian.Uint32(b[1:])), int(binary.BigEndian.Uint32(b[5:]))
	if count < 0 || size < 1 || size > maxSize {
		return "", 0, 0, fmt.Errorf("the client's test asks for count %d, size %d", count, size)
	}
	return testCodes[b[0]], count, size, nil
}

// connect swaps bundles with the other end over c, each with its Jetty and
// the token of the Jetty and the ping buffers, the client's test ahead of
// its bundle. It imports the other end's Jetty and binds to it, and
// returns the client's test.
func (p *peer) connect(ctx context.Context, c io.ReadWriter, o options, client bool) (test string, count, size int, err error) {
	if client {
		_, err = c.Write(marshalTest(o.test(), o.count, o.size))
	} else {
		var b [testSize]byte
		if _, err = io.ReadFull(c, b[:]); err == nil {
			test, count, size, err = parseTest(b[:])
		}
	}
	if err != nil {
		return "", 0, 0, err
	}
	var mine bootstrap.Bundle
	mine.AddJetty("jetty", p.jetty, p.token)
	theirs, err := bootstrap.Exchange(ctx, c, &mine)
	if err != nil {
		return "", 0, 0, err
	}
	e, err := theirs.Lookup("jetty")
	if err != nil {
		return "", 0, 0, err
	}
	p.peerID, p.peerToken = e.Jetty, e.Token
	if p.remote, err = theirs.Import(ctx, p.ctx, "jetty"); err != nil {
		return "", 0, 0, err
	}
	return test, count, size, p.jetty.Bind(ctx, p.remote)
}

// buffers allocates the two ping buffers of size bytes.
func (p *peer) buffers(size int) error {
	cfg := segment.Config{Access: segAccess, TokenPolicy: segment.TokenPlainText, Token: p.token}
	var err error
	if p.start, err = segment.Alloc(p.ctx, uint64(size), cfg); err != nil {
		return err
	}
	p.rdma, err = segment.Alloc(p.ctx, uint64(size), cfg)
	return err
}

// advertise SENDs the advertisement of one of this end's buffers. To an
// rping peer it carries the buffer's address and rkey; to a krping peer,
// its address and token id.
func (p *peer) advertise(s *segment.Segment) error {
	if p.cm != nil {
		va, rkey, err := p.cm.Key(s)
		if err != nil {
			return err
		}
		return p.sendAd(ad{buf: va, rkey: rkey, size: uint32(s.Len())})
	}
	d := s.Descriptor()
	return p.sendAd(ad{buf: d.VA, rkey: d.TokenID, size: uint32(d.Len)})
}

// target imports the buffer a received advertisement names. The advert
// carries address, token id and length; the EID and UASID are the other
// end's, and the token is the one of its bundle. Imports are
// kept: a loop advertises the same buffers again and again.
func (p *peer) target(a ad) (*segment.Target, error) {
	if t, ok := p.imports[a]; ok {
		return t, nil
	}
	if p.cm != nil {
		t, err := p.cm.Import(a.buf, uint64(a.size), a.rkey)
		if err != nil {
			return nil, err
		}
		p.imports[a] = t
		return t, nil
	}
	desc := segment.Descriptor{EID: p.peerID.ID.EID, UASID: p.peerID.ID.UASID, VA: a.buf, Len: uint64(a.size),
		Access: segAccess, TokenPolicy: segment.TokenPlainText, TokenID: a.rkey}
	t, err := segment.Import(context.Background(), p.ctx, desc, p.peerToken)
	if err != nil {
		return nil, fmt.Errorf("import the advertised buffer %#x (rkey %d, %d bytes): %w", a.buf, a.rkey, a.size, err)
	}
	p.imports[a] = t
	return t, nil
}

// sendAd SENDs an advertisement (or krping's empty "go ahead" when a is
// the zero ad) from the send slot.
func (p *peer) sendAd(a ad) error {
	a.marshal(p.ctl.Bytes()[recvSlots*adSize:])
	if err := p.jetty.Send(nil, p.ctl.SGE(recvSlots*adSize, adSize), 0, sendCtx); err != nil {
		return err
	}
	p.stats.sendMsgs++
	p.stats.sendBytes += adSize
	return nil
}

// recvSlots is how many receives each end keeps posted.
const recvSlots = 8

// Request contexts of the send side; receive slots use 0 to recvSlots-1.
const (
	sendCtx  = 100
	readCtx  = 101
	writeCtx = 102
)

// await waits for the completions of the given kinds, in any order, and
// returns the bytes of the receive if one was expected. A receive slot is
// reposted once its data is copied out.
func (p *peer) await(ctx context.Context, wantRecv bool, sends ...uint64) ([]byte, error) {
	var got []byte
	pending := map[uint64]int{}
	for _, s := range sends {
		pending[s]++
	}
	if wantRecv && len(p.early) > 0 {
		got, p.early, wantRecv = p.early[0], p.early[1:], false
	}
	for wantRecv || len(pending) > 0 {
		cr, err := p.cq.Next(ctx, waitLimit)
		if err != nil {
			return nil, err
		}
		if cr.Flags&jetty.CRRecv != 0 {
			i := int(cr.UserCtx)
			msg := append([]byte{}, p.ctl.Bytes()[i*adSize:i*adSize+int(cr.Len)]...)
			p.stats.recvMsgs++
			p.stats.recvBytes += uint64(cr.Len)
			if err := p.jetty.Recv(p.slot(i), cr.UserCtx); err != nil {
				return nil, err
			}
			if !wantRecv {
				if len(p.early) > 0 {
					return nil, fmt.Errorf("%s: unexpected message of %d bytes", p.name, cr.Len)
				}
				p.early = append(p.early, msg)
				continue
			}
			got, wantRecv = msg, false
			continue
		}
		if pending[cr.UserCtx] == 0 {
			return nil, fmt.Errorf("%s: unexpected completion %v", p.name, cr)
		}
		if pending[cr.UserCtx]--; pending[cr.UserCtx] == 0 {
			delete(pending, cr.UserCtx)
		}
	}
	return got, nil
}

// close frees everything in URMA's order. Nil-safe and idempotent.
func (p *peer) close() error {
	if p == nil {
		return nil
	}
	var errs []error
	for k, t := range p.imports {
		errs = append(errs, t.Close())
		delete(p.imports, k)
	}
	if p.cm != nil {
		errs = append(errs, p.cm.Close())
	}
	if p.jetty != nil && p.remote != nil {
		_ = p.jetty.Unbind()
	}
	errs = append(errs, p.remote.Close(), p.jetty.Close(), p.cq.Close(),
		p.ctl.Close(), p.start.Close(), p.rdma.Close(), p.ctx.Close())
	return errors.Join(errs...)
}
