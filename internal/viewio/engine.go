package viewio

import (
	"sync"
	"sync/atomic"

	"github.com/urma-go/sdk/provider"
)

// Dir is the way data moves through a view in one transfer.
type Dir uint8

// Directions.
const (
	// FromView: the view is the source (the local side of WRITE or SEND,
	// or what a peer READs).
	FromView Dir = iota
	// IntoView: the view is the destination (the local side of READ, a
	// receive, or what a peer WRITEs).
	IntoView
)

// Config is a configured view: its memory and both domains' signatures.
type Config struct {
	// Mem is the layout's memory, piece by piece in stream order.
	Mem    [][]byte
	MemLen uint64
	// WireLen is the data's length on the wire.
	WireLen         uint64
	MemSig, WireSig Sig
	// Bounce is the registered segment the provider moves the wire form
	// through; BounceBuf is its memory, at least WireLen bytes.
	Bounce    provider.MemRef
	BounceBuf []byte
	// Whole: a transfer must cover the view (signed views).
	Whole bool
}

// Engine is one view's software data path. SGEs name it as their Seg; it
// allows one transfer at a time, as the software path has one bounce
// buffer. mu is held while data moves, so that closing the view never
// frees memory under a transfer.
type Engine struct {
	cfg Config

	mu      sync.Mutex
	invalid bool
	busy    bool
	// release frees the bounce segment once a transfer in flight at Close
	// ends.
	release func()
	// the transfer in flight
	dir     Dir
	off     uint64 // where the transfer starts in memory
	woff    uint64 // and in the wire form
	mis     *Mismatch
	pending *Mismatch // first mismatch since the last TakeMismatch
}

// New returns an engine for cfg.
func New(cfg Config) *Engine {
	made.Store(true)
	return &Engine{cfg: cfg}
}

// made is set by the first New: until then no SGE can name an engine.
var made atomic.Bool

// Made tells whether any engine was made in this process, so that a data
// path that looks for engines in its requests may skip the look until one
// was.
func Made() bool { return made.Load() }

// Desc makes an Engine an SGE's Seg: a view's addresses run from 0 to its
// memory length.
func (e *Engine) Desc() provider.SegmentDesc { return provider.SegmentDesc{Len: e.cfg.MemLen} }

// Invalidate makes later transfers fail. It returns false, and changes
// nothing, while a transfer is in flight.
func (e *Engine) Invalidate() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busy {
		return false
	}
	e.invalid = true
	return true
}

// Close invalidates the engine and calls release now, or when the transfer
// in flight ends.
func (e *Engine) Close(release func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.invalid = true
	if e.busy {
		e.release = release
		return
	}
	release()
}

// Busy reports a transfer in flight.
func (e *Engine) Busy() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.busy
}

// Begin starts one transfer for sge, whose Seg is e, and returns the SGE
// the provider moves instead: the wire form's range of the bounce segment.
// For FromView the wire form is in place when Begin returns.
func (e *Engine) Begin(sge provider.SGE, dir Dir) (provider.SGE, error) {
	off, n := sge.Addr, uint64(sge.Len)
	if off > e.cfg.MemLen || n > e.cfg.MemLen-off {
		return provider.SGE{}, provider.Errorf(provider.ErrRange, "range [%d, %d) of a %d-byte view", off, off+n, e.cfg.MemLen)
	}
	woff, wn := off, n
	if e.cfg.Whole {
		if off != 0 || n != e.cfg.MemLen {
			return provider.SGE{}, provider.Errorf(provider.ErrInvalid, "a signed view moves whole: range [%d, %d) of %d bytes", off, off+n, e.cfg.MemLen)
		}
		woff, wn = 0, e.cfg.WireLen
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.invalid:
		return provider.SGE{}, provider.Errorf(provider.ErrInvalid, "view is invalidated or closed: configure it and take a new SGE")
	case e.busy:
		return provider.SGE{}, provider.Errorf(provider.ErrBusy, "view has a transfer in flight")
	}
	e.busy = true
	e.dir, e.off, e.woff, e.mis = dir, off, woff, nil
	if dir == FromView {
		e.mis = e.fromMem(off, n)
	}
	return provider.SGE{Seg: e.cfg.Bounce, Addr: e.cfg.Bounce.Desc().VA + woff, Len: uint32(wn)}, nil
}

// End finishes the transfer after its completion: moved wire bytes
// arrived (for IntoView) and st is the provider's status. It returns the
// status the record reports: CRSignatureErr for a mismatch, LOC_LEN_ERR
// for a receive that is not whole blocks of a signed view, LOC_ACCESS_ERR
// if the view was closed meanwhile.
func (e *Engine) End(moved uint32, st provider.CRStatus) provider.CRStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case st != provider.CRSuccess:
	case e.invalid:
		st = provider.CRLocAccessErr
	case e.dir == IntoView && e.cfg.Whole && uint64(moved)%e.wireStride() != 0:
		st = provider.CRLocLenErr
	case e.dir == IntoView:
		e.mis = e.toMem(e.off, e.woff, uint64(moved))
	}
	if st == provider.CRSuccess && e.mis != nil {
		st = provider.CRSignatureErr
		e.note(e.mis)
	}
	e.finish()
	return st
}

// wireStride is the size of one block in the wire form of a signed view.
func (e *Engine) wireStride() uint64 {
	if e.cfg.WireSig.on() {
		return e.cfg.WireSig.stride()
	}
	return uint64(e.cfg.MemSig.Block)
}

// Abort ends a transfer that was not posted or was flushed.
func (e *Engine) Abort() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.finish()
}

func (e *Engine) finish() {
	e.busy = false
	if e.release != nil {
		e.release()
		e.release = nil
	}
}

// Publish puts the whole view's wire form into the bounce segment for
// peers to READ. It returns false if a transfer is in flight.
func (e *Engine) Publish() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busy || e.invalid {
		return false
	}
	e.note(e.fromMem(0, e.cfg.MemLen))
	return true
}

// Collect moves the wire form peers WROTE into the bounce segment into the
// view's memory. It returns false if a transfer is in flight.
func (e *Engine) Collect() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busy || e.invalid {
		return false
	}
	e.note(e.toMem(0, 0, e.cfg.WireLen))
	return true
}

// TakeMismatch returns the first mismatch since the last call and forgets
// it, as mlx5dv_mkey_check does.
func (e *Engine) TakeMismatch() *Mismatch {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.pending
	e.pending = nil
	return m
}

func (e *Engine) note(m *Mismatch) {
	if e.pending == nil {
		e.pending = m
	}
}

// fromMem moves memory [off, off+n) to its wire form in the bounce buffer.
func (e *Engine) fromMem(off, n uint64) *Mismatch {
	src := newCursor(e.cfg.Mem, off)
	woff := off
	if e.cfg.Whole {
		woff = 0
	}
	dst := newCursor([][]byte{e.cfg.BounceBuf}, woff)
	return transform(&dst, &src, e.cfg.MemSig, e.cfg.WireSig, n)
}

// toMem moves wn wire bytes at woff of the bounce buffer into memory from
// off.
func (e *Engine) toMem(off, woff, wn uint64) *Mismatch {
	src := newCursor([][]byte{e.cfg.BounceBuf}, woff)
	dst := newCursor(e.cfg.Mem, off)
	return transform(&dst, &src, e.cfg.WireSig, e.cfg.MemSig, wn)
}
