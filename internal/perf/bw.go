package perf

import (
	"math"
	"time"

	"github.com/urma-go/sdk/jetty"
)

// peakWindow is the shortest stretch over which BW peak is measured.
const peakWindow = 5 * time.Millisecond

// bwOutcome is what the client's bandwidth loop measured.
type bwOutcome struct {
	iters   int
	elapsed time.Duration
	// peak is the most requests per second over any window of at least
	// peakWindow (and at least one signaled record).
	peak float64
}

// signaler tells which requests of a bandwidth loop are signaled: one in
// cqMod, and the last. It counts down rather than taking n%cqMod, a 64-bit
// division of tens of cycles per request.
type signaler struct{ left, cqMod int }

func newSignaler(cqMod int) signaler { return signaler{left: cqMod, cqMod: cqMod} }

// next tells whether the n-th request of limit (from 1, called in order)
// is signaled.
func (s *signaler) next(n, limit int) bool {
	s.left--
	if s.left == 0 {
		s.left = s.cqMod
		return true
	}
	return n == limit
}

// atSignal tells whether the last request counted was signaled by the
// one-in-cqMod rule (or none was counted yet).
func (s *signaler) atSignal() bool { return s.left == s.cqMod }

// bwClient keeps TxDepth requests in flight, posting PostList at a time
// and signaling one in CQMod, until limit requests are done (or, with a
// duration, until it passes). The default loop posts with the queue's Post
// (a list of one without -l); a tuned one posts a lone request from its
// prepared handles.
func (r *run) bwClient(limit int) (bwOutcome, error) {
	e := r.e
	cfg := e.cfg
	base := r.wr[0].Flags &^ jetty.Signaled
	posted, completed := 0, 0
	start := time.Now()
	markT, markN := start, 0
	var peak float64
	sig := newSignaler(cfg.CQMod)
	for completed < limit {
		// Post while there is room; with a duration, stop at a signaled
		// request so that the records account for everything posted.
		for posted < limit && posted-completed < cfg.TxDepth {
			if !r.until.IsZero() && sig.atSignal() && !time.Now().Before(r.until) {
				limit = posted
				break
			}
			batch := min(cfg.PostList, cfg.TxDepth-(posted-completed), limit-posted)
			if cfg.PostList == 1 && r.loud != nil {
				pr := r.quiet
				if sig.next(posted+1, limit) {
					pr = r.loud
				}
				if err := pr.Post(); err != nil {
					return bwOutcome{}, err
				}
				posted++
				continue
			}
			for k := range batch {
				f := base
				if sig.next(posted+k+1, limit) {
					f |= jetty.Signaled
				}
				r.wr[k].Flags = f
			}
			if err := e.post(r.wr[:batch]); err != nil {
				return bwOutcome{}, err
			}
			posted += batch
		}
		if completed >= limit {
			break
		}
		n, err := e.poll(r.ctx, e.jfc)
		if err != nil {
			return bwOutcome{}, err
		}
		if _, bad := tally(e.crs[:n]); bad >= 0 {
			return bwOutcome{}, failedCR(&e.crs[bad])
		}
		for range n {
			completed = min(completed+cfg.CQMod, posted)
		}
		r.progress.Store(int64(completed))
		if now := time.Now(); now.Sub(markT) >= peakWindow {
			peak = math.Max(peak, float64(completed-markN)/now.Sub(markT).Seconds())
			markT, markN = now, completed
		}
	}
	out := bwOutcome{iters: completed, elapsed: time.Since(start), peak: peak}
	if avg := float64(completed) / out.elapsed.Seconds(); out.peak < avg {
		out.peak = avg // a run shorter than one window
	}
	return out, nil
}

// bwServer receives the client's SENDs until stop and returns how many
// arrived; the one-sided tests need nothing of it.
func (r *run) bwServer() (int64, error) {
	e := r.e
	if e.cfg.Test.Op != Send {
		return 0, nil
	}
	var got int64
	for {
		err := r.reap(e.rjfc)
		got += int64(r.e.pendingRecv)
		r.e.pendingRecv = 0
		if err == nil {
			err = r.fillRecvs()
		}
		if err != nil {
			return got, err
		}
	}
}
