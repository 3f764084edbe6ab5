package remote

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/urma-go/sdk/provider"
)

// client multiplexes calls over the connection to a peer: any number of
// goroutines call at once, each waiting for its own reply, and one reader
// goroutine hands the replies out.
type client struct {
	conn net.Conn
	pid  int

	wmu sync.Mutex // serializes whole requests on the stream
	bw  *bufio.Writer
	enc *gob.Encoder

	mu      sync.Mutex
	next    uint64
	pending map[uint64]*call
	lost    error // set once the connection is gone; every call fails with it
}

type call struct {
	reply any
	done  chan error
}

// lostError is how every call fails once the peer is unreachable. It wraps
// provider.ErrClosed: the peer's objects are gone with it.
type lostError struct{ msg string }

func (e *lostError) Error() string { return e.msg + ": " + provider.ErrClosed.Error() }
func (e *lostError) Unwrap() error { return provider.ErrClosed }

// isLost reports whether err says the peer is gone, as opposed to an error
// of the peer's provider.
func isLost(err error) bool {
	var l *lostError
	return errors.As(err, &l)
}

func newClient(conn net.Conn, pid int) *client {
	bw := bufio.NewWriter(conn)
	c := &client{conn: conn, pid: pid, bw: bw, enc: gob.NewEncoder(bw), pending: map[uint64]*call{}}
	go c.read()
	return c
}

// read delivers replies until the connection fails, then fails every
// pending call, so that no caller waits for a peer that cannot answer.
func (c *client) read() {
	dec := gob.NewDecoder(bufio.NewReader(c.conn))
	for {
		var h header
		if err := dec.Decode(&h); err != nil {
			c.fail(fmt.Sprintf("remote peer %d: connection lost (%v)", c.pid, err))
			return
		}
		c.mu.Lock()
		cl := c.pending[h.ID]
		delete(c.pending, h.ID)
		c.mu.Unlock()
		var dst any
		if cl != nil {
			dst = cl.reply
		}
		if err := dec.Decode(dst); err != nil {
			if cl != nil {
				cl.done <- &lostError{msg: fmt.Sprintf("remote peer %d: bad reply (%v)", c.pid, err)}
			}
			c.fail(fmt.Sprintf("remote peer %d: connection lost (%v)", c.pid, err))
			return
		}
		if cl != nil {
			cl.done <- decodeErr(h.Status, h.Msg)
		}
	}
}

// fail marks the connection lost, closes it and fails the pending calls.
func (c *client) fail(why string) {
	c.mu.Lock()
	if c.lost == nil {
		c.lost = &lostError{msg: why}
	}
	lost := c.lost
	calls := c.pending
	c.pending = map[uint64]*call{}
	c.mu.Unlock()
	_ = c.conn.Close()
	for _, cl := range calls {
		cl.done <- lost
	}
}

// start sends a request and returns the channel its outcome arrives on;
// the reply is decoded into reply before that.
func (c *client) start(o op, args, reply any) <-chan error {
	cl := &call{reply: reply, done: make(chan error, 1)}
	c.mu.Lock()
	if c.lost != nil {
		cl.done <- c.lost
		c.mu.Unlock()
		return cl.done
	}
	c.next++
	id := c.next
	c.pending[id] = cl
	c.mu.Unlock()

	c.wmu.Lock()
	err := c.enc.Encode(&header{ID: id, Op: o})
	if err == nil {
		err = c.enc.Encode(args)
	}
	if err == nil {
		err = c.bw.Flush()
	}
	c.wmu.Unlock()
	if err != nil {
		// The stream is unusable after a partial request: give up on it.
		c.fail(fmt.Sprintf("remote peer %d: send: %v", c.pid, err))
	}
	return cl.done
}

// call sends a request and waits for its reply. The reply is never nil.
func (r rpc[A, R]) call(c *client, a *A) (*R, error) {
	reply := new(R)
	err := <-c.start(r.op, a, reply)
	return reply, err
}

// start sends a request without waiting; the reply is valid once the
// channel delivered the outcome.
func (r rpc[A, R]) start(c *client, a *A) (*R, <-chan error) {
	reply := new(R)
	return reply, c.start(r.op, a, reply)
}
