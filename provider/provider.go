package provider

import (
	"context"
	"time"
)

// Driver is what a provider registers with urma.Register.
type Driver interface {
	// Name is the provider's registry name, e.g. "loopback" or "ib".
	Name() string
	// Devices lists the provider's devices; a provider that cannot run on
	// this machine returns an error wrapping ErrNotSupported.
	Devices() ([]Device, error)
}

// Device is one URMA device.
type Device interface {
	Name() string
	Attr() DeviceAttr
	// EIDs returns the device's EID table.
	EIDs() []EID
	// Open creates a context on the EID at eidIndex (urma_create_context).
	Open(eidIndex int) (Context, error)
}

// Context is a device opened on one EID. Its methods are safe for concurrent use.
type Context interface {
	EID() EID
	UASID() uint32
	// AllocTokenID and FreeTokenID manage token ids shared between segments.
	AllocTokenID() (uint32, error)
	FreeTokenID(id uint32) error
	// AllocSegment allocates and registers size bytes of memory the provider
	// owns, off the Go heap.
	AllocSegment(size uint64, cfg SegmentConfig) (Segment, error)
	// RegisterSegment registers caller memory, which must stay valid and
	// must not move until the segment is closed.
	RegisterSegment(buf []byte, cfg SegmentConfig) (Segment, error)
	// ImportSegment checks the token and returns a handle for one-sided
	// access. It may ask the owner; ctx bounds the wait, and once it is
	// done the call returns ContextErr(ctx) with nothing imported.
	ImportSegment(ctx context.Context, desc SegmentDesc, token uint32) (Target, error)
	NewJFCE() (JFCE, error)
	NewJFC(cfg JFCConfig) (JFC, error)
	NewJFS(cfg JFSConfig) (JFS, error)
	NewJFR(cfg JFRConfig) (JFR, error)
	NewJetty(cfg JettyConfig) (Jetty, error)
	// Import checks the token and returns a handle to a remote JFR or
	// Jetty. ctx bounds the exchange with the owner, as for ImportSegment.
	Import(ctx context.Context, desc JettyDesc, token uint32) (Remote, error)
	// AsyncEvent blocks for the next async event until ctx is done.
	AsyncEvent(ctx context.Context) (AsyncEvent, error)
	// AckAsyncEvent acknowledges an event returned by AsyncEvent.
	AckAsyncEvent(ev AsyncEvent) error
	Close() error
}

// AsyncEvent is an asynchronous event (urma_async_event_t).
type AsyncEvent struct {
	Type EventType
	// Object is the Owner given at creation of the object that raised the
	// event (a JFC, JFS, JFR or Jetty), nil for port and device events.
	Object any
	// Port is the port number of port events.
	Port int
	// Handle identifies the event to the provider for AckAsyncEvent.
	Handle uint64
}

// Segment is registered local memory.
type Segment interface {
	Desc() SegmentDesc
	// Bytes is the segment's memory.
	Bytes() []byte
	// Close unregisters the segment; later accesses by importers fail with
	// REM_ACCESS_ABORT_ERR.
	Close() error
}

// Target is an imported remote segment.
type Target interface {
	Desc() SegmentDesc
	// Close unimports the segment.
	Close() error
}

// Remote is an imported remote JFR or Jetty.
type Remote interface {
	Desc() JettyDesc
	// Close unimports it.
	Close() error
}

// JFCE is a completion event channel.
type JFCE interface {
	// Wait blocks until at least one JFC of this channel has an event,
	// stores the Owners of the JFCs with events in out and returns how
	// many. Events already there are returned even when ctx is done, so a
	// done ctx makes Wait a check. Once ctx is done with no event, it
	// returns (0, ContextErr(ctx)) within a millisecond: a deadline matches
	// ErrTimeout and context.DeadlineExceeded. A Close during the wait
	// ends it with ErrClosed.
	Wait(ctx context.Context, out []any) (int, error)
	Close() error
}

// JFC is a completion queue.
type JFC interface {
	// Poll moves up to len(crs) completion records into crs.
	Poll(crs []CR) (int, error)
	// Rearm requests one event on the JFC's JFCE for the next record (or the
	// next solicited or failed one when solicitedOnly). It fails with ErrAgain
	// while unread records remain, as urma_rearm_jfc does.
	Rearm(solicitedOnly bool) error
	// Ack acknowledges n events returned by JFCE.Wait for this JFC.
	Ack(n int) error
	// Modify changes the moderation settings.
	Modify(count int, period time.Duration) error
	Depth() int
	Close() error
}

// Sender is the send side shared by JFS and Jetty.
type Sender interface {
	// Post queues work requests; see the package contract.
	Post(wrs []WR) (int, error)
	// Flush moves WR_FLUSH_ERR records for the requests still queued into
	// crs; the queue must be in StateError.
	Flush(crs []CR) (int, error)
	// Advise prepares the path to a remote JFR or Jetty (RM mode); ctx
	// bounds the connection it may make.
	Advise(ctx context.Context, r Remote) error
	Unadvise(r Remote) error
	Query() (QueueAttr, error)
	// Modify changes the state: to StateError, or from StateError back to
	// StateReset and then StateReady.
	Modify(s State) error
	Close() error
}

// JFS is a send queue.
type JFS interface {
	Sender
}

// JFR is a receive queue.
type JFR interface {
	// PostRecv queues receive requests, like Post.
	PostRecv(wrs []RecvWR) (int, error)
	Desc() JettyDesc
	Query() (QueueAttr, error)
	Modify(s State) error
	Close() error
}

// Jetty is a send queue with a receive queue, own or shared.
type Jetty interface {
	Sender
	PostRecv(wrs []RecvWR) (int, error)
	Desc() JettyDesc
	// Bind connects an RC Jetty to exactly one remote Jetty; ctx bounds
	// the connection.
	Bind(ctx context.Context, r Remote) error
	Unbind() error
}

// SharedMemory is implemented by segments whose memory is a file another
// process of the host can map (a memfd): the segment's bytes are
// [offset, offset+Desc().Len) of fd. ok is false for memory the segment
// does not own, such as registered caller memory. The fd stays owned by the
// segment and is valid until it is closed.
type SharedMemory interface {
	MemFD() (fd int, offset int64, ok bool)
}
