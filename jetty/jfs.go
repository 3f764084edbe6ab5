package jetty

import (
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Queue defaults, used where a config leaves a field zero.
const (
	DefaultDepth      = 256
	DefaultMaxSGE     = 4
	DefaultRNRRetry   = 6
	DefaultRNRTimeout = 10 * time.Millisecond
)

// JFSConfig configures a JFS or the send side of a Jetty. JFC is required.
// Zero fields take defaults: Depth DefaultDepth, Mode RM, MaxSGE the smaller
// of DefaultMaxSGE and the device's limit, RNRRetry DefaultRNRRetry (a
// negative value means no retry, 7 retries forever), RNRTimeout
// DefaultRNRTimeout.
type JFSConfig struct {
	Depth      int
	Mode       urma.TransportMode
	MaxSGE     int
	MaxInline  int
	RNRRetry   int
	RNRTimeout time.Duration
	JFC        *JFC
	// LockFree promises that one goroutine at a time uses the queue:
	// posts to it (Post, Prepare, a Prepared's Post, PostAfter,
	// PostWhen) and polls or rearms the JFC it completes into, as a loop
	// that owns both does (urma_jfs_flag_t.lock_free; UCX's and verbs'
	// single-threaded modes). The provider may then post without a
	// locked instruction: on loopback the queue's lock becomes a plain
	// store and load for that goroutine, while its own timers and
	// helpers, Close, Query and Modify still take it safely from any
	// goroutine, at a few microseconds each. A post and a poll of the
	// queue's JFC, or two posts, at once from two goroutines corrupt the
	// queue's state. Providers without such locking ignore it.
	LockFree bool

	// Queue knobs (urma_jfs_cfg_t). Each zero value keeps the queue as
	// it is without the knob; one the device cannot honour is refused
	// with urma.ErrNotSupported, and the device attribute named says so.
	//
	// ErrorSuspend (urma_jfs_flag_t.error_suspend; DeviceAttr.
	// ErrorSuspend) makes a failed request move the queue to
	// urma.StateSuspended instead of urma.StateError: the failed
	// request's record comes first, then one record of status
	// urma.CRWRSuspendDone with the CRSuspendDone flag. The requests
	// posted after the failed one stay queued, unrun: Modify to
	// urma.StateReady resumes them in order, and Flush (in the suspended
	// state) hands them back as WR_FLUSH_ERR records instead. Posts are
	// refused with urma.ErrBadState while the queue is suspended. The
	// JFC needs a slot for the extra record.
	ErrorSuspend bool
	// Order (urma_jfs_flag_t.order_type; DeviceAttr.OrderCap) asks for
	// an order type; urma.OrderDefault is what the provider gives
	// anyway.
	Order urma.OrderType
	// ErrTimeout (err_timeout; DeviceAttr.ErrTimeout) is how long a
	// request waits for an answer from its target before it fails. It
	// is rounded up to UMDK's steps of 4.096us*2^n, n from 0 to 31 (up
	// to about 2.4 hours); zero leaves the provider's default. UM queues
	// ignore it: no datagram is answered.
	ErrTimeout time.Duration
}

func (c JFSConfig) provider(uctx *urma.Context, owner any) (provider.JFSConfig, error) {
	if c.JFC == nil {
		return provider.JFSConfig{}, provider.Errorf(urma.ErrInvalid, "JFC is required")
	}
	if c.Depth < 0 || c.MaxSGE < 0 || c.MaxInline < 0 || c.RNRTimeout < 0 {
		return provider.JFSConfig{}, provider.Errorf(urma.ErrInvalid, "negative depth, sge, inline or rnr timeout")
	}
	attr := uctx.Device().Attr()
	pc := provider.JFSConfig{Depth: c.Depth, Mode: provider.TransportMode(c.Mode), MaxSGE: c.MaxSGE, MaxInline: c.MaxInline,
		RNRRetry: c.RNRRetry, RNRTimeout: c.RNRTimeout, JFC: c.JFC.p, LockFree: c.LockFree, Owner: owner}
	if pc.Depth == 0 {
		pc.Depth = min(DefaultDepth, attr.MaxJFSDepth)
	}
	if pc.Mode == 0 {
		pc.Mode = provider.RM
	}
	if !pc.Mode.Valid() {
		// Not a mode at all: a bad argument, where a provider checking
		// it against the device's modes would report a mode the device
		// lacks (ErrNotSupported).
		return provider.JFSConfig{}, provider.Errorf(urma.ErrInvalid, "unknown transport mode %#x", uint8(pc.Mode))
	}
	if pc.MaxSGE == 0 {
		pc.MaxSGE = min(DefaultMaxSGE, attr.MaxJFSSGE)
	}
	switch {
	case pc.RNRRetry == 0:
		pc.RNRRetry = DefaultRNRRetry
	case pc.RNRRetry < 0:
		pc.RNRRetry = 0
	case pc.RNRRetry > 7:
		return provider.JFSConfig{}, provider.Errorf(urma.ErrInvalid, "RNRRetry %d > 7", pc.RNRRetry)
	}
	if pc.RNRTimeout == 0 {
		pc.RNRTimeout = DefaultRNRTimeout
	}
	if err := c.knobs(&pc); err != nil {
		return provider.JFSConfig{}, err
	}
	return pc, nil
}

// JFS is a send queue (urma_jfs_t). In RM mode one JFS reaches every
// imported JFR; in UM mode it sends messages only.
type JFS struct {
	sender
	depth  int
	closer closer
}

// NewJFS creates a send queue. RC mode needs a Jetty (see NewJetty).
func NewJFS(uctx *urma.Context, cfg JFSConfig) (*JFS, error) {
	if uctx == nil {
		return nil, opErr("create jfs", provider.Errorf(urma.ErrInvalid, "nil context"))
	}
	if cfg.Mode == urma.RC {
		return nil, opErr("create jfs", provider.Errorf(urma.ErrInvalid, "RC mode needs a Jetty bound with Bind, not a JFS"))
	}
	j := &JFS{}
	pc, err := cfg.provider(uctx, j)
	if err != nil {
		return nil, opErr("create jfs", err)
	}
	if err := cfg.JFC.take(pc.Depth, "JFS"); err != nil {
		return nil, opErr("create jfs", err)
	}
	p, err := uctx.Raw().NewJFS(pc)
	if err != nil {
		cfg.JFC.give(pc.Depth)
		return nil, opErr("create jfs", err)
	}
	j.sender.p, j.sender.kind, j.sender.jfc, j.depth = p, "jfs", cfg.JFC, pc.Depth
	return j, nil
}

// Raw returns the provider's JFS.
func (j *JFS) Raw() provider.JFS { return j.sender.p.(provider.JFS) }

// Close deletes the JFS (urma_delete_jfs). It fails with urma.ErrBusy while
// an async event it raised is unacknowledged. Idempotent and nil-safe.
func (j *JFS) Close() error {
	if j == nil {
		return nil
	}
	return j.closer.close("delete jfs", closeQueue(j.sender.p.Close, j.sender.jfc, j.depth))
}
