package exutil

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// The out-of-band channel: what URMA leaves to the application. A server
// listens on a TCP address, a client connects, and they swap length-prefixed
// messages (descriptors and tokens) before any RDMA happens.

// MaxMsg bounds one out-of-band message.
const MaxMsg = 1 << 16

// WriteMsg writes b with a 4-byte big-endian length before it.
func WriteMsg(w io.Writer, b []byte) error {
	if len(b) > MaxMsg {
		return fmt.Errorf("out-of-band message of %d bytes, limit %d", len(b), MaxMsg)
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := w.Write(append(n[:], b...)); err != nil {
		return fmt.Errorf("out-of-band write: %w", err)
	}
	return nil
}

// ReadMsg reads one message written by WriteMsg.
func ReadMsg(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, fmt.Errorf("out-of-band read: %w", err)
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > MaxMsg {
		return nil, fmt.Errorf("out-of-band message of %d bytes, limit %d", size, MaxMsg)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("out-of-band read: %w", err)
	}
	return b, nil
}

// Accept waits for one connection on l until ctx is done.
func Accept(ctx context.Context, l net.Listener) (net.Conn, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := l.Accept()
		ch <- res{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-ctx.Done():
		_ = l.Close()
		if r := <-ch; r.c != nil {
			_ = r.c.Close()
		}
		return nil, ctx.Err()
	}
}

// Dial connects to a server's out-of-band address, retrying for up to
// wait while it is not listening yet (a server started a moment ago).
func Dial(ctx context.Context, addr string, wait time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(wait)
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return c, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Closer closes the connection when ctx is done, so that a blocked read
// returns; the returned stop ends that watch.
func Closer(ctx context.Context, c net.Conn) (stop func() bool) {
	return context.AfterFunc(ctx, func() { _ = c.Close() })
}
