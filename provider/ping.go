package provider

import (
	"context"
	"io"
)

// Pinger is implemented by the contexts of providers that can measure a
// round trip to a peer context without the peer's application taking
// part: the peer's provider answers (urma_ping's reachability check). A
// provider without one gives ErrNotSupported from urma.Context.Ping.
type Pinger interface {
	// Ping sends payload to the context at dst and uasid and returns once
	// the same bytes came back from it. A uasid of 0 addresses the EID
	// alone: the provider picks the context that answers for it (see
	// ListenPing). ctx bounds the wait; a reply that does not echo payload
	// is an error, never a success.
	Ping(ctx context.Context, dst EID, uasid uint32, payload []byte) error
	// MaxPingPayload is the largest payload Ping carries.
	MaxPingPayload() int
	// ListenPing makes this context answer pings addressed to its EID
	// alone, until the returned Closer is closed; a provider whose
	// contexts always answer them returns a Closer with nothing to do.
	ListenPing() (io.Closer, error)
}
