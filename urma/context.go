package urma

import (
	"context"
	"sync"
	"time"

	"github.com/urma-go/sdk/provider"
)

// Options configures Open. A nil *Options means the defaults.
type Options struct{}

// Context is a device opened on one EID (urma_context_t). Segments and
// jetties are created from it; closing it closes them all. Its methods are
// safe for concurrent use.
type Context struct {
	dev      *Device
	p        provider.Context
	closeOne sync.Once
	closeErr error
}

// Open creates a context on the EID at eidIndex of dev (urma_create_context).
func Open(dev *Device, eidIndex int, opts *Options) (*Context, error) {
	if dev == nil {
		return nil, &OpError{Op: "open", Err: provider.Errorf(ErrInvalid, "nil device")}
	}
	if n := len(dev.EIDs()); eidIndex < 0 || eidIndex >= n {
		return nil, &OpError{Op: "open", Obj: dev.String(),
			Err: provider.Errorf(ErrInvalid, "eid index %d out of range [0,%d)", eidIndex, n)}
	}
	p, err := dev.p.Open(eidIndex)
	if err != nil {
		return nil, &OpError{Op: "open", Obj: dev.String(), Err: err}
	}
	return &Context{dev: dev, p: p}, nil
}

// Device returns the device the context was opened on.
func (c *Context) Device() *Device { return c.dev }

// EID returns the context's EID.
func (c *Context) EID() EID { return EID(c.p.EID()) }

// UASID returns the user address space id of the context.
func (c *Context) UASID() uint32 { return c.p.UASID() }

// Raw returns the provider's context. Packages segment and jetty use it;
// applications need it only for provider-specific extensions.
func (c *Context) Raw() provider.Context {
	if c == nil {
		return nil
	}
	return c.p
}

// Close closes every segment, jetty and queue of the context, then the
// context itself (urma_delete_context). It is idempotent and nil-safe.
func (c *Context) Close() error {
	if c == nil {
		return nil
	}
	c.closeOne.Do(func() { c.closeErr = c.p.Close() })
	return c.closeErr
}

// AsyncEvent is an asynchronous event: an object went to error, a JFR ran
// low, a port changed state. Ack it before closing the object that raised it.
type AsyncEvent struct {
	Type EventType
	// Object is the *jetty.JFC, *jetty.JFS, *jetty.JFR or *jetty.Jetty that
	// raised the event, nil for port and device events.
	Object any
	// Port is the port of PORT_ACTIVE and PORT_DOWN events.
	Port int

	ctx *Context
	raw provider.AsyncEvent
}

// Ack acknowledges the event (urma_ack_async_event).
func (e *AsyncEvent) Ack() error {
	if e.ctx == nil {
		return &OpError{Op: "ack async event", Err: provider.Errorf(ErrInvalid, "event not from GetAsyncEvent")}
	}
	if err := e.ctx.p.AckAsyncEvent(e.raw); err != nil {
		return &OpError{Op: "ack async event", Err: err}
	}
	return nil
}

// GetAsyncEvent waits for the next async event until ctx is done
// (urma_get_async_event).
func (c *Context) GetAsyncEvent(ctx context.Context) (*AsyncEvent, error) {
	raw, err := c.p.AsyncEvent(ctx)
	if err != nil {
		return nil, &OpError{Op: "get async event", Err: err}
	}
	return &AsyncEvent{Type: EventType(raw.Type), Object: raw.Object, Port: raw.Port, ctx: c, raw: raw}, nil
}

// GetAsyncEventTimeout waits at most d for the next async event; a timeout
// gives an error wrapping ErrTimeout.
func (c *Context) GetAsyncEventTimeout(d time.Duration) (*AsyncEvent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return c.GetAsyncEvent(ctx)
}
