package stress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/urma-go/sdk/urma"
)

// Stats counts what a node's workers did. A run is good when Mismatches
// is 0 and, without faults, Errors is 0 too.
type Stats struct {
	Writes, Reads, Sends, Recvs, Atomics uint64
	// Mismatches counts data that came back different from what was
	// written or sent: the failure this workload exists to find.
	Mismatches uint64
	// Refused counts runs that ended because a post was refused, and
	// FirstRefusal says why.
	Refused      uint64
	FirstRefusal string `json:",omitempty"`
	// Errors counts records with an error status, by status.
	Errors   uint64
	ByStatus map[string]uint64 `json:",omitempty"`
	// FirstMismatch says what the first mismatch was.
	FirstMismatch string `json:",omitempty"`
}

// Ops is every request and receive completed successfully.
func (s Stats) Ops() uint64 { return s.Writes + s.Reads + s.Sends + s.Recvs + s.Atomics }

func (s *Stats) failed(st urma.CRStatus) {
	s.Errors++
	if s.ByStatus == nil {
		s.ByStatus = map[string]uint64{}
	}
	s.ByStatus[st.String()]++
}

func (s *Stats) refused(err error) {
	if s.Refused == 0 {
		s.FirstRefusal = err.Error()
	}
	s.Refused++
}

func (s *Stats) mismatch(what string) {
	if s.Mismatches == 0 {
		s.FirstMismatch = what
	}
	s.Mismatches++
}

func (s *Stats) add(o Stats) {
	s.Writes += o.Writes
	s.Reads += o.Reads
	s.Sends += o.Sends
	s.Recvs += o.Recvs
	s.Atomics += o.Atomics
	s.Errors += o.Errors
	if s.Refused == 0 {
		s.FirstRefusal = o.FirstRefusal
	}
	s.Refused += o.Refused
	if s.Mismatches == 0 {
		s.FirstMismatch = o.FirstMismatch
	}
	s.Mismatches += o.Mismatches
	for k, v := range o.ByStatus {
		if s.ByStatus == nil {
			s.ByStatus = map[string]uint64{}
		}
		s.ByStatus[k] += v
	}
}

func (s Stats) String() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ErrHang is returned by Run when requests were still in flight Drain
// after the run ended: a completion that never came.
var ErrHang = errors.New("stress: requests never completed")

// Run drives every worker until ctx ends, then lets their requests finish,
// writes the drained line, and keeps serving the peer's SENDs until
// PeerDone. It returns the workers' stats and ErrHang (wrapped) if a
// request did not finish within Drain.
func (n *Node) Run(ctx context.Context) (Stats, error) {
	var wg sync.WaitGroup
	errs := make([]error, len(n.workers))
	for i, w := range n.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = w.run(ctx); errs[i] != nil && !w.told {
				// Gone for good: the peer must not wait for it.
				n.workerDrained()
			}
		}()
	}
	wg.Wait()
	var total Stats
	for _, w := range n.workers {
		total.add(w.stats)
	}
	return total, errors.Join(errs...)
}

// workerDrained counts a worker whose own requests are all done; the last
// one tells the peer.
func (n *Node) workerDrained() {
	if int(n.drained.Add(1)) == len(n.workers) {
		n.line("drained")
	}
}

func (w *worker) run(ctx context.Context) error {
	// Running: keep requests in flight until ctx ends.
	for ctx.Err() == nil && !w.stopped {
		if err := w.postSome(); err != nil {
			// A refused post (the peer went away) ends the run; what
			// was posted must still finish.
			w.refuse(err)
			break
		}
		if err := w.reap(ctx, true); err != nil && ctx.Err() == nil {
			return fmt.Errorf("worker %d: %w", w.idx, err)
		}
	}
	// Draining: no new requests; receives are still served, since the
	// peer's SENDs need them to finish.
	deadline := time.Now().Add(w.n.cfg.Drain)
	for {
		if w.inFlight == 0 && !w.told {
			w.n.workerDrained()
			w.told = true
		}
		if w.told && w.peerDone() {
			return nil
		}
		if time.Now().After(deadline) {
			a, qerr := w.sq.Query()
			return fmt.Errorf("worker %d: %w: %d in flight %v after the run ended (%d WRITE or READ slots, %d SENDs, atomic %v; JFS %v, %d outstanding, %v)",
				w.idx, ErrHang, w.inFlight, w.n.cfg.Drain, slots-len(w.freeSlots), sendSlots-len(w.freeSends), w.atomicBusy,
				a.State, a.Outstanding, qerr)
		}
		wctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := w.reap(wctx, false)
		cancel()
		if err != nil && wctx.Err() == nil {
			return fmt.Errorf("worker %d: %w", w.idx, err)
		}
	}
}

func (w *worker) peerDone() bool {
	select {
	case <-w.n.peerDone:
		return true
	default:
		return false
	}
}

// reap waits for records (busy-polling or in event mode) and handles them.
func (w *worker) reap(ctx context.Context, running bool) error {
	spinFor := time.Duration(0)
	n, err := w.jfc.PollWait(ctx, w.crs, spinFor)
	for i := range n {
		w.handle(&w.crs[i], running)
	}
	if w.broken {
		// A failed request put the JFS in ERROR: the requests queued
		// behind it come back through Flush, as URMA prescribes.
		n, _ := w.sq.Flush(w.crs)
		for i := range n {
			w.handle(&w.crs[i], false)
		}
	}
	return err
}
