package segment

import (
	"context"
	"errors"
	"sync"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Config configures Alloc and Register. Access must be set; the zero
// TokenPolicy is TokenNone.
type Config struct {
	Access      Access
	TokenPolicy TokenPolicy
	// Token is the secret importers must present under TokenPlainText; it
	// must be non-zero then.
	Token uint32
	// TokenID shares a token id from AllocTokenID; nil gives the segment its own.
	TokenID *TokenID
	// HugePages asks Alloc for huge pages, falling back to normal pages.
	HugePages bool
}

func (c Config) provider() (provider.SegmentConfig, error) {
	if err := c.Access.Validate(); err != nil {
		return provider.SegmentConfig{}, err
	}
	switch c.TokenPolicy {
	case TokenNone:
	case TokenPlainText:
		if c.Token == 0 {
			return provider.SegmentConfig{}, provider.Errorf(urma.ErrInvalid, "token policy PLAIN_TEXT needs a non-zero token")
		}
	default:
		return provider.SegmentConfig{}, provider.Errorf(urma.ErrNotSupported, "token policy %v", c.TokenPolicy)
	}
	pc := provider.SegmentConfig{Access: provider.Access(c.Access), TokenPolicy: provider.TokenPolicy(c.TokenPolicy), Token: c.Token, HugePages: c.HugePages}
	if c.TokenID != nil {
		id, err := c.TokenID.value()
		if err != nil {
			return provider.SegmentConfig{}, err
		}
		pc.TokenID = id
	}
	return pc, nil
}

// Segment is registered local memory (urma_target_seg_t of a local segment).
type Segment struct {
	p        provider.Segment
	closeOne sync.Once
	closeErr error
}

// Alloc allocates size bytes of provider memory (off the Go heap, shareable
// with other processes on providers that can) and registers it.
func Alloc(uctx *urma.Context, size uint64, cfg Config) (*Segment, error) {
	if uctx == nil {
		return nil, &urma.OpError{Op: "segment alloc", Err: provider.Errorf(urma.ErrInvalid, "nil context")}
	}
	if size == 0 {
		return nil, &urma.OpError{Op: "segment alloc", Err: provider.Errorf(urma.ErrInvalid, "zero size")}
	}
	pc, err := cfg.provider()
	if err != nil {
		return nil, &urma.OpError{Op: "segment alloc", Err: err}
	}
	p, err := uctx.Raw().AllocSegment(size, pc)
	if err != nil {
		return nil, &urma.OpError{Op: "segment alloc", Err: err}
	}
	return &Segment{p: p}, nil
}

// Register registers caller memory (urma_register_seg). buf must not be
// resized or freed while the segment is registered; the segment keeps a
// reference to it.
func Register(uctx *urma.Context, buf []byte, cfg Config) (*Segment, error) {
	if uctx == nil {
		return nil, &urma.OpError{Op: "segment register", Err: provider.Errorf(urma.ErrInvalid, "nil context")}
	}
	if len(buf) == 0 {
		return nil, &urma.OpError{Op: "segment register", Err: provider.Errorf(urma.ErrInvalid, "empty buffer")}
	}
	pc, err := cfg.provider()
	if err != nil {
		return nil, &urma.OpError{Op: "segment register", Err: err}
	}
	p, err := uctx.Raw().RegisterSegment(buf, pc)
	if err != nil {
		return nil, &urma.OpError{Op: "segment register", Err: err}
	}
	return &Segment{p: p}, nil
}

// Bytes returns the segment's memory. It is valid until Unregister.
func (s *Segment) Bytes() []byte { return s.p.Bytes() }

// Len is the segment's length in bytes.
func (s *Segment) Len() uint64 { return s.p.Desc().Len }

// VA is the segment's start address as peers address it.
func (s *Segment) VA() uint64 { return s.p.Desc().VA }

// Descriptor returns what a peer needs to import the segment.
func (s *Segment) Descriptor() Descriptor { return DescriptorOf(s.p.Desc()) }

// SGE returns the range [off, off+n) of the segment as a scatter/gather
// element. The range is checked when a request using it executes.
func (s *Segment) SGE(off uint64, n uint32) SGE {
	return SGE{mem: s.p, Addr: s.p.Desc().VA + off, Len: n}
}

// RawMem returns the provider's segment.
func (s *Segment) RawMem() provider.MemRef { return s.p }

// Raw returns the provider's segment, for provider-specific extensions.
func (s *Segment) Raw() provider.Segment { return s.p }

// Unregister unregisters the segment (urma_unregister_seg). Importers' later
// accesses complete with REM_ACCESS_ABORT_ERR. Idempotent and nil-safe.
func (s *Segment) Unregister() error {
	if s == nil {
		return nil
	}
	s.closeOne.Do(func() { s.closeErr = closeErr("segment unregister", s.p.Close()) })
	return s.closeErr
}

// Close is Unregister, for io.Closer.
func (s *Segment) Close() error { return s.Unregister() }

// Target is an imported remote segment (urma_target_seg_t of an import).
type Target struct {
	p        provider.Target
	closeOne sync.Once
	closeErr error

	// maps are the target's mappings (Map), unmapped by Unimport.
	maps mapSet
}

// Import imports a peer's segment (urma_import_seg). Under TokenPlainText the
// token must match the one the segment was registered with. The provider
// may ask the owner: ctx bounds the wait, and once it is done Import
// returns its error (matching context.Canceled or DeadlineExceeded) with
// nothing imported.
func Import(ctx context.Context, uctx *urma.Context, desc Descriptor, token uint32) (*Target, error) {
	if uctx == nil {
		return nil, &urma.OpError{Op: "segment import", Err: provider.Errorf(urma.ErrInvalid, "nil context")}
	}
	if err := desc.Validate(); err != nil {
		return nil, &urma.OpError{Op: "segment import", Err: err}
	}
	p, err := uctx.Raw().ImportSegment(ctx, desc.Raw(), token)
	if err != nil {
		return nil, &urma.OpError{Op: "segment import", Obj: desc.String(), Err: err}
	}
	return &Target{p: p}, nil
}

// WrapTarget makes a Target of a provider's target. It is for packages that
// add provider-specific ways of naming remote memory (package rdmacm);
// others import with Import.
func WrapTarget(p provider.Target) *Target { return &Target{p: p} }

// Descriptor returns the descriptor the target was imported from.
func (t *Target) Descriptor() Descriptor { return DescriptorOf(t.p.Desc()) }

// Len is the remote segment's length.
func (t *Target) Len() uint64 { return t.p.Desc().Len }

// SGE returns the remote range [off, off+n): the remote side of a WRITE
// or READ of exactly n bytes, or of an atomic with n 8.
func (t *Target) SGE(off uint64, n uint32) SGE {
	return SGE{mem: t.p, Addr: t.p.Desc().VA + off, Len: n}
}

// RawMem returns the provider's target.
func (t *Target) RawMem() provider.MemRef { return t.p }

// Raw returns the provider's target.
func (t *Target) Raw() provider.Target { return t.p }

// Unimport releases the target (urma_unimport_seg), unmapping its
// mappings (Map) first. Idempotent and nil-safe.
func (t *Target) Unimport() error {
	if t == nil {
		return nil
	}
	t.closeOne.Do(func() {
		t.maps.close()
		t.closeErr = closeErr("segment unimport", t.p.Close())
	})
	return t.closeErr
}

// Close is Unimport, for io.Closer.
func (t *Target) Close() error { return t.Unimport() }

// TokenID is a token id that several segments can share (urma_alloc_token_id).
type TokenID struct {
	ctx  *urma.Context
	id   uint32
	mu   sync.Mutex
	gone bool
}

// AllocTokenID allocates a token id.
func AllocTokenID(uctx *urma.Context) (*TokenID, error) {
	if uctx == nil {
		return nil, &urma.OpError{Op: "alloc token id", Err: provider.Errorf(urma.ErrInvalid, "nil context")}
	}
	id, err := uctx.Raw().AllocTokenID()
	if err != nil {
		return nil, &urma.OpError{Op: "alloc token id", Err: err}
	}
	return &TokenID{ctx: uctx, id: id}, nil
}

// ID is the numeric token id.
func (t *TokenID) ID() uint32 { return t.id }

func (t *TokenID) value() (uint32, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return 0, provider.Errorf(urma.ErrClosed, "token id %d was freed", t.id)
	}
	return t.id, nil
}

// Free releases the token id (urma_free_token_id); it fails with ErrBusy
// while segments use it. Idempotent and nil-safe.
func (t *TokenID) Free() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return nil
	}
	if err := t.ctx.Raw().FreeTokenID(t.id); err != nil {
		return &urma.OpError{Op: "free token id", Err: err}
	}
	t.gone = true
	return nil
}

func closeErr(op string, err error) error {
	if err == nil || errors.Is(err, urma.ErrClosed) {
		return nil
	}
	return &urma.OpError{Op: op, Err: err}
}
