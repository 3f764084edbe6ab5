package provider

import (
	"context"
	"net/netip"
)

// RDMACM is implemented by the contexts of providers that can talk to
// programs written against plain librdmacm and verbs (rdma-core's rping,
// for one), which know nothing of URMA's descriptors and tokens. The
// connection is an ordinary RC connection with no private data; memory is
// named by address and rkey.
type RDMACM interface {
	// DialRDMACM connects the unbound RC Jetty j to an rdma_cm listener at
	// addr. On success j is bound to the returned Remote, which stands for
	// the peer: requests without a Target go there, and Unbind
	// disconnects. The connection is not remade if it breaks.
	DialRDMACM(ctx context.Context, j Jetty, addr netip.AddrPort) (CMPeer, error)
	// ListenRDMACM listens for plain rdma_cm connections at addr; port 0
	// picks one.
	ListenRDMACM(addr netip.AddrPort) (CMListener, error)
	// SegmentKey returns the address and rkey a verbs peer uses to READ or
	// WRITE s; s must allow remote access.
	SegmentKey(s Segment) (va uint64, rkey uint32, err error)
	// ImportKey makes a Target of a range a verbs peer advertised by
	// address and rkey, for requests on the Jetty bound to r. Nothing is
	// checked until a request uses it: a wrong key completes that request
	// with a remote access error.
	ImportKey(r Remote, va, length uint64, rkey uint32) (Target, error)
}

// CMPeer is the Remote a plain rdma_cm connection is bound to.
type CMPeer interface {
	Remote
	// Done is closed when the connection ends: the peer disconnected, the
	// connection failed, or the peer was closed here.
	Done() <-chan struct{}
}

// CMListener accepts plain rdma_cm connections onto Jetties.
type CMListener interface {
	// Addr is the address and port the listener is bound to.
	Addr() netip.AddrPort
	// Accept waits for a connection request and accepts it onto the
	// unbound RC Jetty j, which is then bound to the returned Remote as
	// after DialRDMACM.
	Accept(ctx context.Context, j Jetty) (CMPeer, error)
	// Close stops listening; accepted connections stay.
	Close() error
}
