package jetty

import (
	"context"

	"github.com/urma-go/sdk/internal/memflag"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/spin"
	"github.com/urma-go/sdk/urma"
)

// PostWhen waits until the byte at flag holds want, then posts the
// request, and returns what Post returns. When ctx ends first it returns
// ctx's error and posts nothing.
//
// It is for protocols that signal with memory rather than with records:
// a peer's WRITE whose last byte says the message is complete, answered
// by a WRITE back (perftest's write latency, a key-value server that
// polls its request slots). flag is usually a byte of a registered
// segment that such WRITEs land in; any byte that stays valid until
// PostWhen returns will do. A device writes a message's bytes in no
// promised order, so the flag byte must be written after the data it
// guards, or be the last byte of a message on a device that writes in
// order, as the RDMA devices perftest relies on do.
//
// What it changes is when the request leaves. A provider that can watches
// the flag itself and posts the request the moment it changes: ib without
// a return to Go in between (on Soft-RoCE that is what makes a WRITE
// ping-pong as fast as perftest's), loopback with the post's checks made
// before the flag changes, so that only the request's own work is left
// after it. Elsewhere it is a loop that reads the flag, then Post. While
// it waits it yields as PollWait does with no JFCE: to Go's scheduler
// every few milliseconds, and the core to other threads once the wait
// lasts spin.OSYield. It looks at ctx between looks at the flag, so it
// returns within a millisecond of ctx's end, with an error that matches
// context.DeadlineExceeded and urma.ErrTimeout for a deadline, and
// context.Canceled for a cancel; a ctx that is already done is noticed
// only if the flag is not set.
func (p *Prepared) PostWhen(ctx context.Context, flag *byte, want byte) error {
	if flag == nil {
		return &PostError{Op: p.s.kind + " post", Err: provider.Errorf(urma.ErrInvalid, "nil flag")}
	}
	f := memflag.At(flag)
	var wait spin.Wait
	done := ctx.Done()
	for {
		if p.fp != nil {
			if posted, err := p.fp.PostOnFlag(flag, want); posted {
				if err != nil {
					return p.s.again.of(p.s.kind, "post", 0, err)
				}
				return nil
			}
		}
		if f.Load() == want {
			return p.Post()
		}
		if done != nil {
			select {
			case <-done:
				return opErr(p.s.kind+" post when", provider.ContextErr(ctx))
			default:
			}
		}
		wait.Idle()
		p.pace.Tick()
	}
}
