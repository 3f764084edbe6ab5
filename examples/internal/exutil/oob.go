package exutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
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

// DialNotes is where Dial tells that its server is not there yet.
var DialNotes io.Writer = os.Stderr

// dialAttempt bounds one attempt of Dial, so that a host that does not
// answer at all is told of and retried rather than waited on for the
// kernel's connect timeout.
const dialAttempt = time.Second

// Dial connects to a server's out-of-band address, trying for up to wait
// while it refuses or does not answer (a server started a moment ago, or
// about to be). The first such failure is told on DialNotes at once, so
// that a client whose server is not there says so instead of waiting
// silently; any other failure (an unknown host) ends it at once.
func Dial(ctx context.Context, addr string, wait time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(wait)
	told := false
	for {
		d := net.Dialer{Timeout: min(dialAttempt, max(time.Until(deadline), time.Millisecond))}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil || ctx.Err() != nil {
			return c, err
		}
		var ne net.Error
		retry := errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &ne) && ne.Timeout()
		if !retry || !time.Now().Before(deadline) {
			return nil, err
		}
		if !told && DialNotes != nil {
			fmt.Fprintf(DialNotes, "no server at %s yet (%v); trying for %v\n", addr, err, wait)
			told = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
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
