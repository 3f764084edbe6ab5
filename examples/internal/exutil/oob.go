package exutil

import (
	"context"
	"net"
	"time"
)

// The out-of-band channel: what URMA leaves to the application. A server
// listens on a TCP address, a client connects, and over that connection
// they swap bootstrap bundles (descriptors and tokens) before any RDMA
// happens.

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
