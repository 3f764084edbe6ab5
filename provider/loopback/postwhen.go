package loopback

import (
	"time"

	"github.com/urma-go/sdk/internal/memflag"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/spin"
)

// flagWatch is how long PostOnFlag watches the flag before it lets the
// queue go, for which a post or a Close of this queue, or an Unregister in
// this process, waits as it waits for a post; and its caller, which checks
// its context between watches. It is bounded by the clock, not by a count
// of reads: under the race detector in an emulated guest a read of the
// flag is slow, and a fixed count of reads a watch would keep a cancelled
// PostWhen from its context's check for far longer than the prompt
// cancel every blocking call owes.
const flagWatch = 4 * time.Microsecond

// flagTurnsPerClock is how many reads of the flag pass between clock
// reads: enough that a clock read costs the watch little, few enough that
// flagWatch is kept on hardware.
const flagTurnsPerClock = 256

// PostOnFlag implements provider.FlagPoster for a one-sided request on
// memory this process maps (a WRITE answering the peer's WRITE, as
// perftest's write latency does): it makes a post's checks first, under
// the queue's lock, and then watches the flag; the moment the flag holds
// want, the request runs. A post's checks, made after the flag changed,
// would put their instructions between the peer's message and the
// answer, on the round trip's critical path. The lock keeps what the
// checks found true while it is held: a segment's memory stays mapped (see
// quiesce.go), and the queue's state changes under it. Any other request,
// or one whose checks fail, is left to the caller's Post.
func (p *prepared) PostOnFlag(flag *byte, want byte) (bool, error) {
	if !p.fast || p.tgt == nil {
		return false, nil
	}
	q := p.q
	if q.lockOpen() != nil {
		return false, nil
	}
	// Unlocked here, not deferred, as in Post.
	posted := p.postOnFlagLocked(flag, want)
	q.mu.UnlockOwner()
	return posted, nil
}

// postOnFlagLocked is PostOnFlag under the queue's lock: it tells whether
// it posted the request.
func (p *prepared) postOnFlagLocked(flag *byte, want byte) bool {
	q := p.q
	// As Post checks, for a request that is not a SEND (which alone may
	// go to an inbox behind the queue's earlier requests).
	if !q.clearInbox() || !p.unchanged() || q.full() != nil {
		return false
	}
	f := memflag.At(flag)
	var end time.Duration
	for {
		for range flagTurnsPerClock {
			if f.Load() == want {
				// What Post does next for a one-sided request.
				q.head++
				q.countOne(1, nil, len(p.local))
				q.execPrepared(p, q.head)
				return true
			}
		}
		now := spin.Now()
		if end == 0 {
			end = now + flagWatch
		} else if now >= end {
			return false
		}
	}
}

var _ provider.FlagPoster = (*prepared)(nil)
