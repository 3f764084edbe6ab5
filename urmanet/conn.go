package urmanet

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/spin"
	"github.com/urma-go/sdk/urma"
)

// Slots of a connection's segment: receives first, then DATA and RING
// sends, then control sends. A request's user context is its slot, or
// ringWriteCtx for a WRITE into the peer's ring.
const (
	nRecv        = Window + control
	firstData    = nRecv
	firstCtl     = nRecv + sendSlots
	nSlots       = firstCtl + control
	ringWriteCtx = nSlots
	// spinFor is how long a waiting Read or Write polls before it parks:
	// long enough to cover a round trip between processes of a host, so
	// that a request and its answer cost no wake-up.
	spinFor = 50 * time.Microsecond
	// finWait bounds how long Close waits for its FIN to be taken.
	finWait = time.Second
)

// Conn is a stream over a pair of Jettys; it implements net.Conn. Read and
// Write are safe for concurrent use, with each other and with Close and
// the deadline setters.
type Conn struct {
	uctx          *urma.Context
	jfce          *jetty.JFCE // nil for a polling connection
	jfc           *jetty.JFC
	j             *jetty.Jetty
	seg           *segment.Segment
	buf           []byte
	ring          *segment.Segment // the ring the peer WRITEs into
	ringBuf       []byte
	token         uint32
	local, remote Addr

	readMu, writeMu sync.Mutex
	rdl, wdl        deadline

	// mu guards the state below and the JFC: a record is taken and
	// handled under it, so messages are handled in their order whoever
	// polls (a waiting Read or Write, the parker, Close).
	mu       sync.Mutex
	crs      [16]jetty.CR
	peer     *jetty.Remote
	peerRing *segment.Target
	// rx holds the slots of received DATA and RING messages in order,
	// rxLen a DATA message's length and rxRing a RING message's count of
	// ring bytes (0 for DATA); rxOff is how much of the first Read
	// consumed.
	rx          [nRecv]int
	rxLen       [nRecv]int
	rxRing      [nRecv]int
	rxHead, rxN int
	rxOff       int
	eof         bool
	// credits are the peer's receives this side may fill, of peerWindow;
	// owed are this side's reposted receives not yet reported to the peer.
	credits, owed, peerWindow int
	// ringTail counts the bytes WRITEn into the peer's ring, ringAvail
	// its bytes free to WRITE, of peerRingSize; writesOut counts the
	// WRITEs not completed yet.
	ringTail                uint64
	ringAvail, peerRingSize int
	writesOut               int
	// wreg registers the buffer of the last large write, at wregBase.
	wreg     *segment.Segment
	wregBase uintptr
	// ringAnn counts the ring bytes RING messages announced, ringHead
	// those Read consumed; ringOwed are consumed and not yet reported.
	ringAnn, ringHead uint64
	ringOwed          int
	freeData          []int
	freeCtl           []int
	err               error // the connection failed: a request or a peer's RST
	closed            bool
	wclosed           bool
	// synack is set by a SYNACK during Dial: the listener's Jetty.
	synack  *synInfo
	rxWake  chan struct{}
	txWake  chan struct{}
	closing chan struct{}
	// sleeping is set while a waiter sleeps on the JFCE (sleepers counts
	// it, for Close), kicking while a kick is out; parked counts the
	// other waiters, sleeping until a poller wakes them. released is set
	// once the queues may be closed.
	sleeping, kicking bool
	sleepers          sync.WaitGroup
	parked            int
	released          bool
	// waiting counts the Reads and Writes waiting; heard is set by every
	// record since the probe timer's last tick; probing while a probe is
	// out.
	waiting        int
	heard, probing bool
	probe          *time.Timer
	// rspin and wspin are the spin budgets of Reads and Writes.
	rspin, wspin spinState

	// life is done once Close began: it ends a sleep on the JFCE.
	life context.Context
	stop context.CancelFunc
}

var _ net.Conn = (*Conn)(nil)

// newConn makes a connection's Jetty, JFC and buffers and posts its
// receives; it is not connected yet. A polling connection's JFC has no
// JFCE: its waiters never park. A connection with a ring takes large
// writes from its peer there.
func newConn(uctx *urma.Context, poll, ring bool) (*Conn, error) {
	c := &Conn{uctx: uctx, rdl: newDeadline(), wdl: newDeadline(),
		rxWake: make(chan struct{}, 1), txWake: make(chan struct{}, 1), closing: make(chan struct{}),
		rspin: spinState{budget: spinFor}, wspin: spinState{budget: spinFor},
		freeData: make([]int, 0, sendSlots), freeCtl: make([]int, 0, control)}
	c.rdl.kick, c.wdl.kick = c.kick, c.kick
	var err error
	if c.token, err = randomToken(); err != nil {
		return nil, err
	}
	if !poll {
		if c.jfce, err = jetty.NewJFCE(uctx); err != nil {
			return nil, err
		}
	}
	if c.jfc, err = jetty.NewJFC(uctx, jetty.JFCConfig{Depth: 2 * (nSlots + 1), JFCE: c.jfce}); err != nil {
		c.release()
		return nil, err
	}
	c.j, err = jetty.NewJetty(uctx, jetty.JettyConfig{
		Send: jetty.JFSConfig{Depth: 2*sendSlots + control + 2, Mode: urma.RM, JFC: c.jfc},
		Recv: jetty.JFRConfig{Depth: nRecv, JFC: c.jfc, TokenPolicy: segment.TokenPlainText, Token: c.token},
	})
	if err != nil {
		c.release()
		return nil, err
	}
	if c.seg, err = segment.Alloc(uctx, probeOff+2*probeLen, segment.Config{Access: segment.LocalOnly}); err != nil {
		c.release()
		return nil, err
	}
	c.buf = c.seg.Bytes()
	if ring {
		c.ring, err = segment.Alloc(uctx, RingSize, segment.Config{Access: segment.Read | segment.Write,
			TokenPolicy: segment.TokenPlainText, Token: c.token})
		if err != nil {
			c.release()
			return nil, err
		}
		c.ringBuf = c.ring.Bytes()
	}
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
	// Let the FIN be taken before the Jetty goes.
	for end := spin.Now() + finWait; fin && c.err == nil && len(c.freeCtl) < control && spin.Now() < end; {
		if !c.progressLocked() {
			c.mu.Unlock()
			time.Sleep(20 * time.Microsecond)
			c.mu.Lock()
		}
	}
	c.released = true
	if c.probe != nil {
		c.probe.Stop()
	}
	c.mu.Unlock()
	if c.stop != nil {
		c.stop()
		c.sleepers.Wait()
	}
	c.rdl.stop()
	c.wdl.stop()
	return c.release()
}

// release closes what newConn and connect made, in reverse order.
func (c *Conn) release() error {
	var errs []error
	if c.peerRing != nil {
		errs = append(errs, c.peerRing.Unimport())
	}
	if c.peer != nil {
		errs = append(errs, c.peer.Unimport())
	}
	if c.j != nil {
		errs = append(errs, c.j.Close())
	}
	if c.wreg != nil {
		errs = append(errs, c.wreg.Close())
	}
	if c.ring != nil {
		errs = append(errs, c.ring.Close())
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
