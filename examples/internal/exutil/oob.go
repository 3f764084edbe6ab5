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
