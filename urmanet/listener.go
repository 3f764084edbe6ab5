package urmanet

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Backlog is how many handshaken connections wait for Accept; a SYN past
// it is answered with a RST.
const Backlog = 64

// acceptTimeout bounds the import of a dialer's Jetty during a handshake.
const acceptTimeout = 5 * time.Second

// Listener accepts urmanet connections at a port of a context; it
// implements net.Listener.
type Listener struct {
	addr    Addr
	poll    bool
	acc     *Conn // the accept Jetty and its buffers
	pub     io.Closer
	backlog chan *Conn
	closing chan struct{}
	once    sync.Once
	stop    context.CancelFunc
	done    chan struct{}
	// rst holds the dialers' Jettys imported for a RST until its send
	// finishes, by control slot.
	rst [nSlots]*jetty.Remote
}

var _ net.Listener = (*Listener)(nil)

// Listen listens at addr of uctx: "eid:port", ":port" or "eid:0"; the EID,
// when given, must be uctx's, and port 0 picks a free port (Addr says
// which). A port another listener of the context holds gives
// urma.ErrExist; a provider without ports urma.ErrNotSupported.
func Listen(uctx *urma.Context, addr string) (net.Listener, error) {
	var lc ListenConfig
	return lc.Listen(uctx, addr)
}

// ListenConfig holds the options of a listener and the connections it
// accepts. The zero value is the default of Listen.
type ListenConfig struct {
	// Poll makes accepted connections poll without ever sleeping, as
	// Dialer.Poll does for dialed ones.
	Poll bool
}

// Listen listens at addr of uctx, as the package's Listen does, with lc's
// options.
func (lc *ListenConfig) Listen(uctx *urma.Context, addr string) (net.Listener, error) {
	l, err := listen(uctx, addr, lc.Poll)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: Network, Err: err}
	}
	return l, nil
}

func listen(uctx *urma.Context, addr string, poll bool) (*Listener, error) {
	if uctx == nil {
		return nil, provider.Errorf(urma.ErrInvalid, "nil context")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, provider.Errorf(urma.ErrInvalid, "urma address %q: %v", addr, err)
	}
	a := Addr{EID: uctx.EID()}
	if host != "" {
		eid, err := urma.ParseEID(host)
		if err != nil {
			return nil, provider.Errorf(urma.ErrInvalid, "urma address %q: %v", addr, err)
		}
		if eid != a.EID {
			return nil, provider.Errorf(urma.ErrInvalid, "urma address %q: the context's EID is %v", addr, a.EID)
		}
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, provider.Errorf(urma.ErrInvalid, "urma address %q: port must be 0 to 65535", addr)
	}
	ports, err := portsOf(uctx)
	if err != nil {
		return nil, err
	}
	acc, err := newConn(uctx, false, false)
	if err != nil {
		return nil, err
	}
	desc := acc.j.Descriptor().Raw()
	var pub io.Closer
	if p != 0 {
		a.Port = uint16(p)
		pub, err = ports.PublishPort(a.Port, desc, acc.token)
	} else {
		for range 64 {
			a.Port = uint16(1024 + rand.IntN(65536-1024))
			if pub, err = ports.PublishPort(a.Port, desc, acc.token); !errors.Is(err, urma.ErrExist) {
				break
			}
		}
	}
	if err != nil {
		acc.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Listener{addr: a, poll: poll, acc: acc, pub: pub, backlog: make(chan *Conn, Backlog),
		closing: make(chan struct{}), stop: cancel, done: make(chan struct{})}
	go l.serve(ctx)
	return l, nil
}

// serve answers SYNs until Close.
func (l *Listener) serve(ctx context.Context) {
	defer close(l.done)
	a := l.acc
	crs := make([]jetty.CR, 16)
	for {
		n, err := a.jfc.PollWait(ctx, crs, spinFor)
		if err != nil {
			return
		}
		for k := range n {
			cr := &crs[k]
			i := int(cr.UserCtx)
			if i < 0 || i >= nSlots {
				continue
			}
			if i >= nRecv {
				if r := l.rst[i]; r != nil {
					r.Unimport()
					l.rst[i] = nil
				}
				a.freeCtl = append(a.freeCtl, i)
				continue
			}
			var s synInfo
			ok := cr.OK()
			if ok {
				b := a.slot(i)[:cr.Len]
				typ, _, _ := getHdr(b)
				s, err = parseSyn(b)
				ok = err == nil && typ == msgSyn
			}
			if err := a.repost(i); err != nil {
				provider.Logf(provider.LogWarning, "urmanet: listener %v: repost: %v", l.addr, err)
			}
			if ok {
				l.accept(ctx, s, cr.RemoteID)
			}
		}
	}
}

// accept makes the connection a SYN asks for, or refuses it.
func (l *Listener) accept(ctx context.Context, s synInfo, from urma.JettyID) {
	ctx, cancel := context.WithTimeout(ctx, acceptTimeout)
	defer cancel()
	if len(l.backlog) == cap(l.backlog) {
		l.refuse(ctx, s)
		return
	}
	c, err := newConn(l.acc.uctx, l.poll, true)
	if err != nil {
		l.refuse(ctx, s)
		return
	}
	c.local, c.remote = l.addr, Addr{EID: from.EID}
	if err := c.connect(ctx, s); err != nil {
		c.Close()
		return
	}
	c.mu.Lock()
	i := c.freeCtl[len(c.freeCtl)-1]
	c.freeCtl = c.freeCtl[:len(c.freeCtl)-1]
	n, err := c.synPayload(i, msgSynAck)
	if err == nil {
		err = c.sendLocked(i, n)
	}
	c.mu.Unlock()
	if err != nil {
		c.Close()
		return
	}
	c.start()
	l.backlog <- c // room was checked above, and only serve sends
}

// refuse answers a SYN with a RST from the accept Jetty.
func (l *Listener) refuse(ctx context.Context, s synInfo) {
	a := l.acc
	if len(a.freeCtl) == 0 {
		return
	}
	r, err := jetty.ImportJetty(ctx, a.uctx, s.desc, s.token)
	if err != nil {
		return
	}
	i := a.freeCtl[len(a.freeCtl)-1]
	putHdr(a.slot(i), msgRst, 0, 0)
	if err := a.j.Send(r, a.seg.SGE(uint64(i*SlotSize), hdrSize), 0, uint64(i)); err != nil {
		r.Unimport()
		return
	}
	a.freeCtl = a.freeCtl[:len(a.freeCtl)-1]
	l.rst[i] = r
}

// Accept waits for the next connection; after Close it returns
// net.ErrClosed.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.backlog:
		return c, nil
	case <-l.closing:
		return nil, &net.OpError{Op: "accept", Net: Network, Addr: l.addr, Err: net.ErrClosed}
	}
}

// Close stops listening: the port is unpublished, pending Accepts return
// net.ErrClosed and connections not accepted yet are closed. Connections
// accepted before stay open. Idempotent.
func (l *Listener) Close() error {
	l.once.Do(func() {
		close(l.closing)
		l.pub.Close()
		l.stop()
		<-l.done
		for {
			select {
			case c := <-l.backlog:
				c.Close()
				continue
			default:
			}
			break
		}
		for _, r := range l.rst {
			if r != nil {
				r.Unimport()
			}
		}
		l.acc.Close()
	})
	return nil
}

// Addr is the listener's address.
func (l *Listener) Addr() net.Addr { return l.addr }
