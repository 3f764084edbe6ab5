// Package redial connects to a server that may not be listening yet: the
// out-of-band channel of urmactl perf and of the examples, whose scripts
// start both sides at once.
package redial

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// attempt bounds one try, so that a host that does not answer at all is
// told of and tried again rather than waited on for the kernel's connect
// timeout.
const attempt = time.Second

// Dial connects to addr over TCP, trying for up to wait while it refuses
// (nothing listens yet) or does not answer. The first such failure is
// told on notes at once, as "<prefix>no server at ADDR yet (ERR); trying
// for WAIT", so that a client whose server is not there says so instead
// of waiting silently. Any other failure (an unknown host, an unreachable
// network) ends it at once; so does ctx, with its error. The error is the
// last try's.
func Dial(ctx context.Context, addr string, wait time.Duration, notes io.Writer, prefix string) (net.Conn, error) {
	deadline := time.Now().Add(wait)
	told := false
	for {
		d := net.Dialer{Timeout: min(attempt, max(time.Until(deadline), time.Millisecond))}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ne net.Error
		retry := errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &ne) && ne.Timeout()
		if !retry || !time.Now().Before(deadline) {
			return nil, err
		}
		if !told && notes != nil {
			fmt.Fprintf(notes, "%sno server at %s yet (%v); trying for %v\n", prefix, addr, err, wait)
			told = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
