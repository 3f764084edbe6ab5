package view

import (
	"sync"

	"github.com/urma-go/sdk/internal/viewio"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Config configures a View.
//
// Memory and Wire describe the data's two forms, as an mlx5 signature
// memory key's memory and wire domains do: nil is plain data, a Signature
// is blocks each followed by its checksum. Which of insert, check and strip
// happens follows from the forms and the direction the data moves:
//
//	Memory  Wire   view is the source          view is the destination
//	nil     nil    plain copy                  plain copy
//	nil     sig    insert on the wire          check and strip
//	sig     nil    check and strip             insert into memory
//	sig     sig    check, signatures travel    check, signatures travel
//
// When both are set they must have the same block size; with different
// kinds the output's checksums are computed anew.
type Config struct {
	// Layout is the view's memory: its entries must be local *Segments of
	// the view's context.
	Layout Layout
	Memory *Signature
	Wire   *Signature
	// Access is what peers may do through Expose's descriptor: Read, Write
	// or both. Zero (LocalOnly) keeps the view for local requests.
	Access      segment.Access
	TokenPolicy segment.TokenPolicy
	// Token is the secret importers present under TokenPlainText.
	Token uint32
}

// View is a layout of registered memory, optionally with block signatures,
// that requests use like a segment: its SGE is the local side of WRITE,
// READ, SEND and receives, and with Access set, Expose gives peers a
// descriptor to WRITE and READ it. It is the portable form of an mlx5 UMR
// memory key with a signature.
//
// Every device runs views in software: the data moves through a
// bounce segment, gathered and signed by the CPU before a request is
// posted and checked and scattered when its record is polled (hash/crc32
// uses the CPU's CRC instructions). Because of that bounce segment a view
// runs one transfer at a time; a second one fails with urma.ErrBusy.
//
// A signed view moves whole: its SGE must cover it. A record of a request
// whose signature check failed has status CRSignatureErr (its Err matches
// urma.ErrSignature); Check names the block.
type View struct {
	ctx *urma.Context

	mu      sync.Mutex
	cfg     Config
	eng     *viewio.Engine
	bounce  *segment.Segment
	exposed bool
	invalid bool
	closed  bool
}

// New creates a view over cfg.Layout.
func New(uctx *urma.Context, cfg Config) (*View, error) {
	if uctx == nil {
		return nil, &urma.OpError{Op: "view create", Err: provider.Errorf(urma.ErrInvalid, "nil context")}
	}
	v := &View{ctx: uctx}
	if err := v.configure(cfg); err != nil {
		return nil, &urma.OpError{Op: "view create", Err: err}
	}
	return v, nil
}

// Configure gives the view a new layout and signatures, as a UMR
// reconfiguration does. It fails with urma.ErrBusy while a transfer is in
// flight. An exposed view keeps its descriptor when the new wire form fits
// in the old one and Access and the token stay; otherwise it gets a new
// one, which peers must import again. Expose again either way: on the
// software path that is when a view with Read access publishes its data.
func (v *View) Configure(cfg Config) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return &urma.OpError{Op: "view configure", Err: err}
	}
	if err := v.configure(cfg); err != nil {
		return &urma.OpError{Op: "view configure", Err: err}
	}
	return nil
}

func (v *View) usable() error {
	switch {
	case v.closed:
		return provider.Errorf(urma.ErrClosed, "view is closed")
	case v.eng != nil && v.eng.Busy():
		return provider.Errorf(urma.ErrBusy, "view has a transfer in flight")
	}
	return nil
}

// configure builds the engine for cfg, reusing the bounce segment when it
// fits and the access and token stay: an exposed view then keeps its
// descriptor, as a reconfigured UMR key keeps its rkey, and peers READ or
// WRITE the first WireLen bytes of it.
func (v *View) configure(cfg Config) error {
	ec, err := v.engineConfig(cfg)
	if err != nil {
		return err
	}
	if v.eng != nil && !v.eng.Invalidate() {
		return provider.Errorf(urma.ErrBusy, "view has a transfer in flight")
	}
	keep := v.bounce != nil && v.bounce.Len() >= ec.WireLen &&
		v.cfg.Access == cfg.Access && v.cfg.TokenPolicy == cfg.TokenPolicy && v.cfg.Token == cfg.Token
	if !keep {
		acc := cfg.Access
		if acc == 0 {
			acc = segment.LocalOnly
		}
		b, err := segment.Alloc(v.ctx, max(ec.WireLen, 1), segment.Config{Access: acc, TokenPolicy: cfg.TokenPolicy, Token: cfg.Token})
		if err != nil {
			return err
		}
		if err := v.bounce.Unregister(); err != nil {
			_ = b.Unregister()
			return err
		}
		v.bounce, v.exposed = b, false
	}
	ec.Bounce, ec.BounceBuf = v.bounce.RawMem(), v.bounce.Bytes()
	v.cfg, v.eng, v.invalid = cfg, viewio.New(ec), false
	return nil
}

// engineConfig checks cfg and resolves its layout to memory.
func (v *View) engineConfig(cfg Config) (viewio.Config, error) {
	var ec viewio.Config
	if cfg.Access == 0 {
		cfg.Access = segment.LocalOnly
	}
	if err := cfg.Access.Validate(); err != nil {
		return ec, err
	}
	if cfg.Access&segment.Atomic != 0 {
		return ec, provider.Errorf(urma.ErrInvalid, "a view takes no atomics")
	}
	if err := cfg.Layout.Validate(); err != nil {
		return ec, err
	}
	for p := range cfg.Layout.Pieces() {
		b, err := localBytes(p)
		if err != nil {
			return ec, err
		}
		ec.Mem = append(ec.Mem, b)
	}
	ec.MemLen = cfg.Layout.Len()
	ms, err := domain(cfg.Memory)
	if err != nil {
		return ec, err
	}
	ws, err := domain(cfg.Wire)
	if err != nil {
		return ec, err
	}
	ec.MemSig, ec.WireSig, ec.Whole = ms, ws, cfg.Memory != nil || cfg.Wire != nil
	ec.WireLen, err = wireLen(ec.MemLen, cfg.Memory, cfg.Wire)
	return ec, err
}

// domain converts a domain's signature for the engine.
func domain(s *Signature) (viewio.Sig, error) {
	if s == nil {
		return viewio.Sig{}, nil
	}
	if err := s.Validate(); err != nil {
		return viewio.Sig{}, err
	}
	t := ieeeTable
	if s.Kind == SigCRC32C {
		t = castagnoliTable
	}
	return viewio.Sig{Table: t, Block: s.BlockSize}, nil
}

// wireLen is the wire form's length of memLen bytes of memory: the
// memory's plain length with the wire's signatures added. A signed memory
// must be whole protected blocks, a signed wire whole plain ones; with
// both, the block sizes must match and the length does not change.
func wireLen(memLen uint64, mem, wire *Signature) (uint64, error) {
	if mem != nil && wire != nil && mem.BlockSize != wire.BlockSize {
		return 0, provider.Errorf(urma.ErrInvalid, "memory blocks of %d bytes, wire blocks of %d: they must match", mem.BlockSize, wire.BlockSize)
	}
	n := int(memLen)
	var err error
	if mem != nil {
		if n, err = mem.PlainLen(n); err != nil {
			return 0, err
		}
	}
	if wire != nil {
		n, err = wire.ProtectedLen(n)
	}
	return uint64(n), err
}

// Len is the length of the view's memory, what its SGE ranges over.
func (v *View) Len() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cfg.Layout.Len()
}

// WireLen is the length of the view's data on the wire: what a request
// through the whole view moves, and what a peer imports from Expose.
func (v *View) WireLen() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	n, _ := wireLen(v.cfg.Layout.Len(), v.cfg.Memory, v.cfg.Wire)
	return n
}

// SGE returns the range [off, off+n) of the view's memory as the local side
// of a request. A signed view's SGE must be the whole view: SGE(0, Len).
// The SGE is bound to the current configuration: after Configure or
// Invalidate, take a new one.
func (v *View) SGE(off uint64, n uint32) segment.SGE {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.eng == nil {
		return segment.SGE{}
	}
	return segment.SGEOf(provider.SGE{Seg: v.eng, Addr: off, Len: n})
}

// Expose returns the descriptor peers import to WRITE or READ the view's
// wire form. On the software path peers reach a bounce segment, so Expose
// also brackets their access: with Read access it puts the view's data
// there now (call it once the memory holds what peers should read), and
// Check moves what they wrote into the memory.
func (v *View) Expose() (segment.Descriptor, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return segment.Descriptor{}, &urma.OpError{Op: "view expose", Err: err}
	}
	if v.invalid {
		return segment.Descriptor{}, &urma.OpError{Op: "view expose", Err: provider.Errorf(urma.ErrInvalid, "view is invalidated: configure it again")}
	}
	if v.cfg.Access == segment.LocalOnly || v.cfg.Access == 0 {
		return segment.Descriptor{}, &urma.OpError{Op: "view expose", Err: provider.Errorf(urma.ErrPermission, "view was configured LocalOnly")}
	}
	if v.cfg.Access&segment.Read != 0 && !v.eng.Publish() {
		return segment.Descriptor{}, &urma.OpError{Op: "view expose", Err: provider.Errorf(urma.ErrBusy, "view has a transfer in flight")}
	}
	v.exposed = true
	return v.bounce.Descriptor(), nil
}

// Check reports the first signature mismatch since the last Check, as
// mlx5dv_mkey_check does: a *SigError with the block index, the stored
// checksum and the data's. For an exposed view with Write access it first
// moves what peers wrote into the memory (checking it); call it after they
// are done. nil means every block matched.
func (v *View) Check() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return &urma.OpError{Op: "view check", Err: err}
	}
	if v.exposed && v.cfg.Access&segment.Write != 0 && !v.eng.Collect() {
		return &urma.OpError{Op: "view check", Err: provider.Errorf(urma.ErrBusy, "view has a transfer in flight")}
	}
	m := v.eng.TakeMismatch()
	if m == nil {
		return nil
	}
	k := SigCRC32
	in := v.cfg.Memory
	if in == nil {
		in = v.cfg.Wire
	}
	if in != nil {
		k = in.Kind
	}
	return &SigError{Kind: k, Block: m.Block, Expected: m.Expected, Actual: m.Actual}
}

// Invalidate ends the configuration, as a UMR local invalidate does:
// requests through its SGEs fail with urma.ErrInvalid, and peers' accesses
// through an exposed descriptor complete with REM_ACCESS_ABORT_ERR, until
// Configure. It fails with urma.ErrBusy while a transfer is in flight.
func (v *View) Invalidate() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return &urma.OpError{Op: "view invalidate", Err: err}
	}
	if !v.eng.Invalidate() {
		return &urma.OpError{Op: "view invalidate", Err: provider.Errorf(urma.ErrBusy, "view has a transfer in flight")}
	}
	v.invalid = true
	if v.exposed {
		err := v.bounce.Unregister()
		v.bounce, v.exposed = nil, false
		if err != nil {
			return err
		}
	}
	return nil
}

// Close invalidates the view and frees its bounce segment. A transfer still
// in flight then completes with an error. Idempotent and nil-safe.
func (v *View) Close() error {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil
	}
	v.closed = true
	b := v.bounce
	v.bounce = nil
	if v.eng == nil {
		return b.Unregister()
	}
	// The bounce segment goes when no transfer uses it any more.
	v.eng.Close(func() { _ = b.Unregister() })
	return nil
}
