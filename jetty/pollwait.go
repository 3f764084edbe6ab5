package jetty

import (
	"context"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/spin"
	"github.com/urma-go/sdk/urma"
)

// spinClock is how many empty polls pass between reads of the clock while
// PollWait spins out its budget.
const spinClock = 16

// PollWait moves at least one and up to len(crs) completion records into
// crs and returns how many, waiting for the first one: spin, then park.
//
// It polls for up to spinFor. Past that, a JFC with a JFCE of its own is
// armed and the goroutine sleeps on the JFCE until a record arrives, so a
// record that comes within spinFor costs no wake-up and a late one no
// CPU. A JFC without a JFCE (polling mode) spins until a record arrives,
// whatever spinFor says. While spinning it yields to Go's scheduler once
// every few milliseconds, by the clock (see the ib provider's notes on
// busy polling), and, once a wait has lasted spin.OSYield, its core to
// the operating system's other threads every spin.OSYield: a peer process
// on the same core then gets to run within that time, not at the end of
// the kernel's time slice.
//
// It returns once ctx is done, within a millisecond whether it spins or
// sleeps, with an error that matches context.DeadlineExceeded and
// urma.ErrTimeout for a deadline, context.Canceled for a cancel; records
// that are there are returned first. The JFCE may be shared with other
// JFCs and their waiters (see JFCE.Wait); the events PollWait sleeps on
// are its own to acknowledge, and it does. A record with an error status
// is returned like any other: check CR.OK.
func (j *JFC) PollWait(ctx context.Context, crs []CR, spinFor time.Duration) (int, error) {
	// Records already there (a loopback READ or atomic completes as it is
	// posted) are taken without setting up the wait.
	if len(crs) > 0 {
		if n, err := j.Poll(crs); n > 0 || err != nil {
			return n, err
		}
	}
	return j.pollWait(ctx, crs, spinFor, nil)
}

// pollWait is PollWait; with a, its polls post a's request (PostAfter).
func (j *JFC) pollWait(ctx context.Context, crs []CR, spinFor time.Duration, a *postAfter) (int, error) {
	if len(crs) == 0 {
		return 0, opErr("poll jfc", provider.Errorf(urma.ErrInvalid, "no room for records"))
	}
	var start time.Duration
	var wait spin.Wait
	done := ctx.Done()
	for i := 0; ; i++ {
		n, err := j.pollOnce(crs, a)
		if n > 0 || err != nil {
			return n, err
		}
		if done != nil {
			select {
			case <-done:
				return 0, opErr("poll jfc", provider.ContextErr(ctx))
			default:
			}
		}
		wait.Idle()
		j.pace.Tick()
		if j.jfce == nil {
			continue
		}
		if spinFor > 0 {
			switch {
			case i == 0:
				start = spin.Now()
				continue
			case i%spinClock != 0 || spin.Now()-start < spinFor:
				continue
			}
		}
		if err := j.park(ctx); err != nil {
			return 0, err
		}
	}
}

// park arms the JFC and sleeps on its JFCE until its event or ctx is
// done; a record that arrived before the arm ends it at once.
func (j *JFC) park(ctx context.Context) error {
	j.parks.Add(1)
	if err := j.Rearm(false); err == errRearmUnread {
		return nil
	} else if err != nil {
		return err
	}
	return j.Wait(ctx)
}
