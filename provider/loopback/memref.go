package loopback

import (
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/sg"
)

// memRef is how a request reaches segment memory, wherever the segment
// lives: the owner's segEntry says whether it is still registered, and mem is
// the memory as this process sees it. mem is nil for caller memory of another
// process, which only process_vm_readv/writev reach (pid says whose).
type memRef struct {
	ent *segEntry
	// inflight counts this process's accesses to the owner's caller
	// memory, in the count page of its link (nil when not counted).
	inflight *atomic.Int32
	gen      uint32
	va       uint64
	len      uint64
	access   provider.Access
	mem      []byte
	pid      int
	// peer is the owner's process when it is not this one; its mappings
	// stay valid while peer.usable says so, for as long as the request's
	// queue lock is held.
	peer *peerConn
	// counted accesses reach the owner's own memory from another process
	// (through process_vm_*), so they hold inflight while they run; the
	// owner's Unregister waits for them. Accesses from the owner's process
	// are waited out through the queue locks instead (see quiesce.go).
	counted bool
}

// acquire pins the segment for one access. It returns CRSuccess, or the
// status the access fails with: REM_ACCESS_ABORT_ERR if the segment was
// unregistered, the peer's loss status if its process is gone.
func (r *memRef) acquire() provider.CRStatus {
	if r.peer != nil {
		if st := r.peer.usable(); st != provider.CRSuccess {
			return st
		}
	}
	return r.pin()
}

func (r *memRef) release() { r.unpin() }

// pin is acquire for a caller that knows the peer usable (or with no
// peer): the access is counted if it must be, and the segment checked.
func (r *memRef) pin() provider.CRStatus {
	if r.counted {
		r.inflight.Add(1)
	}
	if r.ent.state.Load() != segLive || r.ent.gen.Load() != r.gen {
		r.unpin()
		return provider.CRRemAccessAbortErr
	}
	return provider.CRSuccess
}

// unpin undoes pin. A span's list undoes it the same way, through the
// span's Held (see span): the two stay one.
func (r *memRef) unpin() {
	if r.counted {
		r.inflight.Add(-1)
	}
}

// span sets s to the range [addr, addr+n) if it lies inside the segment
// and tells whether it does (s is left alone when not). It fills s in place
// rather than returning a span (see sg.Span). The span holds the access
// acquire counted, if any: s.Held is the counter release would count it out
// of, nil when the access is not counted.
func (r *memRef) span(addr uint64, n uint32, s *sg.Span) bool {
	off := addr - r.va
	if addr < r.va || off > r.len || uint64(n) > r.len-off {
		return false
	}
	s.N, s.PID, s.Held = uint64(n), r.pid, nil
	if r.counted {
		s.Held = r.inflight
	}
	if r.mem == nil {
		s.B, s.Raddr = nil, addr
		return true
	}
	s.B, s.Raddr = r.mem[off:off+uint64(n)], 0
	return true
}
