package exutil

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"time"

	"github.com/urma-go/sdk/internal/redial"
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

// DialNotes is where Dial tells that its server is not there yet.
var DialNotes io.Writer = os.Stderr

// Dial connects to a server's out-of-band address, trying for up to wait
// while it is not listening yet, and tells DialNotes at once when it is
// not (see redial.Dial).
func Dial(ctx context.Context, addr string, wait time.Duration) (net.Conn, error) {
	return redial.Dial(ctx, addr, wait, DialNotes, "")
}

// Both runs a server and a client in this process, over an out-of-band
// channel on a free port of 127.0.0.1: serve on the listener (which it
// closes) in a goroutine, the client here with the listener's address. A
// client that fails closes the listener, so that a server still waiting
// for it stops; that server's net.ErrClosed is then not an error of its
// own.
func Both(serve func(net.Listener) error, client func(addr string) error) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- serve(l) }()
	cerr := client(l.Addr().String())
	if cerr != nil {
		_ = l.Close()
	}
	serr := <-done
	switch {
	case cerr == nil:
		return serr
	case serr == nil || errors.Is(serr, net.ErrClosed):
		return cerr
	}
	return errors.Join(cerr, serr)
}
