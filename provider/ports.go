package provider

import (
	"context"
	"io"
)

// Ports is implemented by the contexts of providers that can name a
// Jetty by a port number at their EID, the way a host names a listening
// socket: one context publishes a Jetty's descriptor and token under a
// port, and any context that reaches that EID resolves (EID, port) to
// them through the provider's own control path, without the application
// at the EID taking part. urmanet builds its listeners on it; a provider
// without it gives ErrNotSupported there.
type Ports interface {
	// PublishPort makes ResolvePort(EID, port) answer with desc and token
	// until the returned Closer is closed. A port already published at
	// the context gives ErrExist; port 0 is ErrInvalid.
	PublishPort(port uint16, desc JettyDesc, token uint32) (io.Closer, error)
	// ResolvePort returns the descriptor and token published under port
	// by a context at dst: ErrNotFound when no context there publishes
	// it. ctx bounds the exchange.
	ResolvePort(ctx context.Context, dst EID, port uint16) (JettyDesc, uint32, error)
}
