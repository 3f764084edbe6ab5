package urmanet

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Slots of a connection's segment: receives first, then DATA sends, then
// control sends. A request's user context is its slot.
const (
	nRecv     = Window + control
	firstData = nRecv
	firstCtl  = nRecv + sendSlots
	nSlots    = firstCtl + control
	// spinFor is how long the poller spins before it parks on the JFCE.
	spinFor = 20 * time.Microsecond
	// finWait bounds how long Close waits for its FIN to be taken.
	finWait = time.Second
)

// Conn is a stream over a pair of Jettys; it implements net.Conn. Read and
// Write are safe for concurrent use, with each other and with Close and
// the deadline setters.
type Conn struct {
	uctx          *urma.Context
	jfce          *jetty.JFCE
	jfc           *jetty.JFC
	j             *jetty.Jetty
	seg           *segment.Segment
	buf           []byte
	token         uint32
	local, remote Addr

	readMu, writeMu sync.Mutex
	rdl, wdl        deadline

	mu   sync.Mutex
	peer *jetty.Remote
	// rx holds the slots of received DATA in order, rxLen their lengths;
	// rxOff is how much of the first Read consumed.
	rx          [nRecv]int
	rxLen       [nRecv]int
	rxHead, rxN int
	rxOff       int
	eof         bool
	// credits are the peer's DATA receives this side may fill; owed are
	// this side's reposted DATA receives not yet reported to the peer.
	credits, owed int
	freeData      []int
	freeCtl       []int
	err           error // the connection failed: a request or a peer's RST
	closed        bool
	wclosed       bool
	// synack is set by a SYNACK during Dial: the listener's Jetty.
	synack  *synInfo
	rxWake  chan struct{}
	txWake  chan struct{}
	closing chan struct{}

	stop context.CancelFunc
	done chan struct{}
}

var _ net.Conn = (*Conn)(nil)

type synInfo struct {
	desc   jetty.Descriptor
	token  uint32
	window uint32
}

// newConn makes a connection's Jetty, JFC and buffers and posts its
// receives; it is not connected yet. A polling connection's JFC has no
// JFCE: its waiters never park.
func newConn(uctx *urma.Context, poll bool) (*Conn, error) {
	c := &Conn{uctx: uctx, rdl: newDeadline(), wdl: newDeadline(),
		rxWake: make(chan struct{}, 1), txWake: make(chan struct{}, 1), closing: make(chan struct{}),
		freeData: make([]int, 0, sendSlots), freeCtl: make([]int, 0, control)}
	var err error
	if c.token, err = randomToken(); err != nil {
		return nil, err
	}
	if !poll {
		if c.jfce, err = jetty.NewJFCE(uctx); err != nil {
			return nil, err
		}
	}
	if c.jfc, err = jetty.NewJFC(uctx, jetty.JFCConfig{Depth: 2 * nSlots, JFCE: c.jfce}); err != nil {
		c.release()
		return nil, err
	}
	c.j, err = jetty.NewJetty(uctx, jetty.JettyConfig{
		Send: jetty.JFSConfig{Depth: sendSlots + control, Mode: urma.RM, JFC: c.jfc},
		Recv: jetty.JFRConfig{Depth: nRecv, JFC: c.jfc, TokenPolicy: segment.TokenPlainText, Token: c.token},
	})
	if err != nil {
		c.release()
		return nil, err
	}
	if c.seg, err = segment.Alloc(uctx, nSlots*SlotSize, segment.Config{Access: segment.LocalOnly}); err != nil {
		c.release()
		return nil, err
	}
	c.buf = c.seg.Bytes()
	for i := range nRecv {
		if err := c.repost(i); err != nil {
			c.release()
			return nil, err
		}
	}
	for i := firstData; i < firstCtl; i++ {
		c.freeData = append(c.freeData, i)
	}
	for i := firstCtl; i < nSlots; i++ {
		c.freeCtl = append(c.freeCtl, i)
	}
	return c, nil
}

func randomToken() (uint32, error) {
	var b [4]byte
	for {
		if _, err := crand.Read(b[:]); err != nil {
			return 0, err
		}
		if t := binary.LittleEndian.Uint32(b[:]); t != 0 {
			return t, nil
		}
	}
}

func (c *Conn) slot(i int) []byte { return c.buf[i*SlotSize : (i+1)*SlotSize] }

func (c *Conn) repost(i int) error {
	return c.j.Recv(c.seg.SGE(uint64(i*SlotSize), SlotSize), uint64(i))
}

// synPayload writes a SYN or SYNACK into slot i and returns its length.
func (c *Conn) synPayload(i int, typ uint8) (int, error) {
	b := c.slot(i)
	putHdr(b, typ, 0)
	d, err := c.j.Descriptor().MarshalBinary()
	if err != nil {
		return 0, err
	}
	copy(b[hdrSize:], d)
	binary.LittleEndian.PutUint32(b[hdrSize+32:], c.token)
	binary.LittleEndian.PutUint32(b[hdrSize+36:], Window)
	return synSize, nil
}

func parseSyn(b []byte) (synInfo, error) {
	var s synInfo
	if len(b) != synSize {
		return s, provider.Errorf(urma.ErrInvalid, "handshake of %d bytes, want %d", len(b), synSize)
	}
	if err := s.desc.UnmarshalBinary(b[hdrSize : hdrSize+32]); err != nil {
		return s, err
	}
	s.token = binary.LittleEndian.Uint32(b[hdrSize+32:])
	s.window = binary.LittleEndian.Uint32(b[hdrSize+36:])
	if s.window == 0 || s.window > Window {
		return s, provider.Errorf(urma.ErrInvalid, "handshake window %d out of range [1,%d]", s.window, Window)
	}
	return s, nil
}

// connect imports the peer's Jetty; the poller starts after it.
func (c *Conn) connect(ctx context.Context, s synInfo) error {
	r, err := jetty.ImportJetty(ctx, c.uctx, s.desc, s.token)
	if err != nil {
		return err
	}
	if err := c.j.Advise(ctx, r); err != nil {
		r.Unimport()
		return err
	}
	c.mu.Lock()
	c.peer = r
	c.credits = int(s.window)
	c.mu.Unlock()
	return nil
}

func (c *Conn) start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.stop, c.done = cancel, make(chan struct{})
	go c.poll(ctx)
}

// poll takes the connection's completion records until Close.
func (c *Conn) poll(ctx context.Context) {
	defer close(c.done)
	crs := make([]jetty.CR, 16)
	for {
		n, err := c.jfc.PollWait(ctx, crs, spinFor)
		if err != nil {
			if ctx.Err() == nil {
				c.mu.Lock()
				c.failLocked(err)
				c.mu.Unlock()
			}
			return
		}
		c.mu.Lock()
		for i := range n {
			c.handleLocked(&crs[i])
		}
		c.mu.Unlock()
	}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (c *Conn) failLocked(err error) {
	if c.err == nil {
		c.err = err
	}
	wake(c.rxWake)
	wake(c.txWake)
}

// handleLocked takes one completion record.
func (c *Conn) handleLocked(cr *jetty.CR) {
	i := int(cr.UserCtx)
	if i < 0 || i >= nSlots {
		return
	}
	if i >= nRecv { // a send finished
		if i >= firstCtl {
			c.freeCtl = append(c.freeCtl, i)
			c.maybeCreditLocked()
		} else {
			c.freeData = append(c.freeData, i)
		}
		if !cr.OK() && !c.closed {
			c.failLocked(cr.Err())
		}
		wake(c.txWake)
		return
	}
	if !cr.OK() {
		if !c.closed {
			c.failLocked(cr.Err())
		}
		return
	}
	b := c.slot(i)[:cr.Len]
	if len(b) < hdrSize {
		c.failLocked(provider.Errorf(urma.ErrInvalid, "message of %d bytes", len(b)))
		return
	}
	typ, credit := getHdr(b)
	c.credits += int(credit)
	if credit > 0 {
		wake(c.txWake)
	}
	switch typ {
	case msgData:
		c.rx[(c.rxHead+c.rxN)%nRecv] = i
		c.rxLen[(c.rxHead+c.rxN)%nRecv] = len(b)
		c.rxN++
		wake(c.rxWake)
		return
	case msgFin:
		c.eof = true
		wake(c.rxWake)
	case msgRst:
		c.failLocked(ErrRefused)
	case msgSynAck:
		if s, err := parseSyn(b); err != nil {
			c.failLocked(err)
		} else {
			c.synack = &s
		}
	case msgCredit:
	default:
		c.failLocked(provider.Errorf(urma.ErrInvalid, "message type %d", typ))
	}
	if err := c.repost(i); err != nil {
		c.failLocked(err)
	}
}

// sendLocked posts slot i with n bytes to the peer.
func (c *Conn) sendLocked(i, n int) error {
	return c.j.Send(c.peer, c.seg.SGE(uint64(i*SlotSize), uint32(n)), 0, uint64(i))
}

// ctlLocked sends a header-only message from a control slot; false when
// none is free.
func (c *Conn) ctlLocked(typ uint8) bool {
	if len(c.freeCtl) == 0 || c.peer == nil {
		return false
	}
	i := c.freeCtl[len(c.freeCtl)-1]
	putHdr(c.slot(i), typ, uint32(c.owed))
	if err := c.sendLocked(i, hdrSize); err != nil {
		c.failLocked(err)
		return false
	}
	c.freeCtl = c.freeCtl[:len(c.freeCtl)-1]
	c.owed = 0
	return true
}

// maybeCreditLocked returns owed receives once half the window is owed.
func (c *Conn) maybeCreditLocked() {
	if c.owed >= Window/2 && !c.closed && c.err == nil {
		c.ctlLocked(msgCredit)
	}
}

// waitLocked drops mu until ch is woken, the deadline passes or the
// connection closes.
func (c *Conn) waitLocked(ch chan struct{}, dl *deadline) error {
	d := dl.wait()
	if isClosed(d) {
		return os.ErrDeadlineExceeded
	}
	c.mu.Unlock()
	var err error
	select {
	case <-ch:
	case <-d:
		err = os.ErrDeadlineExceeded
	case <-c.closing:
	}
	c.mu.Lock()
	return err
}

// Read reads the stream: what arrived, up to len(b), waiting for some
// when nothing did. It returns io.EOF after the peer's FIN.
func (c *Conn) Read(b []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.closed {
			return 0, c.opErr("read", net.ErrClosed)
		}
		if c.rxN > 0 {
			break
		}
		if c.eof {
			return 0, io.EOF
		}
		if c.err != nil {
			return 0, c.opErr("read", c.err)
		}
		if len(b) == 0 {
			return 0, nil
		}
		if err := c.waitLocked(c.rxWake, &c.rdl); err != nil {
			return 0, c.opErr("read", err)
		}
	}
	n := 0
	for c.rxN > 0 && n < len(b) {
		i, end := c.rx[c.rxHead], c.rxLen[c.rxHead]
		k := copy(b[n:], c.slot(i)[hdrSize+c.rxOff:end])
		n += k
		c.rxOff += k
		if hdrSize+c.rxOff < end {
			break
		}
		c.rxHead, c.rxN, c.rxOff = (c.rxHead+1)%nRecv, c.rxN-1, 0
		if err := c.repost(i); err != nil {
			c.failLocked(err)
			break
		}
		c.owed++
	}
	c.maybeCreditLocked()
	return n, nil
}

// Write writes b to the stream, in messages of up to SlotSize-8 bytes,
// waiting for the peer's credit when it has none.
func (c *Conn) Write(b []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for {
		switch {
		case c.closed:
			return n, c.opErr("write", net.ErrClosed)
		case c.wclosed:
			return n, c.opErr("write", errWriteClosed)
		case c.err != nil:
			return n, c.opErr("write", c.err)
		}
		if n == len(b) {
			return n, nil
		}
		if isClosed(c.wdl.wait()) {
			return n, c.opErr("write", os.ErrDeadlineExceeded)
		}
		if c.credits == 0 || len(c.freeData) == 0 {
			if err := c.waitLocked(c.txWake, &c.wdl); err != nil {
				return n, c.opErr("write", err)
			}
			continue
		}
		i := c.freeData[len(c.freeData)-1]
		s := c.slot(i)
		k := copy(s[hdrSize:], b[n:])
		putHdr(s, msgData, uint32(c.owed))
		if err := c.sendLocked(i, hdrSize+k); err != nil {
			c.failLocked(err)
			continue
		}
		c.freeData = c.freeData[:len(c.freeData)-1]
		c.owed = 0
		c.credits--
		n += k
	}
}

var errWriteClosed = errors.New("write side closed")

// CloseWrite shuts the write side: the peer reads io.EOF after what was
// written, and Write fails from now on. Reads go on.
func (c *Conn) CloseWrite() error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opErr("close write", net.ErrClosed)
	}
	if c.wclosed {
		return nil
	}
	c.wclosed = true
	if !c.ctlLocked(msgFin) && c.err == nil {
		return c.opErr("close write", provider.Errorf(urma.ErrAgain, "no control buffer free for FIN"))
	}
	return nil
}

// Close closes the connection: the peer reads io.EOF after what was
// written, pending and later calls return net.ErrClosed. Idempotent.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	fin := false
	if !c.wclosed && c.err == nil {
		fin = c.ctlLocked(msgFin)
		c.wclosed = true
	}
	c.closed = true
	close(c.closing)
	c.mu.Unlock()
	if fin && c.done != nil {
		// Let the FIN be taken before the Jetty goes.
		deadline := time.Now().Add(finWait)
		for time.Now().Before(deadline) {
			c.mu.Lock()
			all := len(c.freeCtl) == control
			c.mu.Unlock()
			if all {
				break
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	if c.stop != nil {
		c.stop()
		<-c.done
	}
	c.rdl.stop()
	c.wdl.stop()
	return c.release()
}

// release closes what newConn made, in reverse order.
func (c *Conn) release() error {
	var errs []error
	if c.peer != nil {
		errs = append(errs, c.peer.Unimport())
	}
	if c.j != nil {
		errs = append(errs, c.j.Close())
	}
	if c.seg != nil {
		errs = append(errs, c.seg.Close())
	}
	if c.jfc != nil {
		errs = append(errs, c.jfc.Close())
	}
	if c.jfce != nil {
		errs = append(errs, c.jfce.Close())
	}
	return errors.Join(errs...)
}

func (c *Conn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: Network, Source: c.local, Addr: c.remote, Err: err}
}

// LocalAddr is this end's address: its context's EID and, for an
// accepted connection, the listener's port (0 for a dialed one).
func (c *Conn) LocalAddr() net.Addr { return c.local }

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.rdl.set(t)
	c.wdl.set(t)
	return nil
}

// SetReadDeadline sets the deadline of pending and later Reads; a zero t
// clears it.
func (c *Conn) SetReadDeadline(t time.Time) error { c.rdl.set(t); return nil }

// SetWriteDeadline sets the deadline of pending and later Writes.
func (c *Conn) SetWriteDeadline(t time.Time) error { c.wdl.set(t); return nil }
