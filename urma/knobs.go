package urma

import "github.com/urma-go/sdk/provider"

// OrderType is the order a send queue's requests keep, with the values of
// urma_order_type_t (jetty.JFSConfig.Order).
type OrderType uint8

// Order types. A provider accepts those in DeviceAttr.OrderCap for a queue
// of a reliable mode (RM, RC), and OrderNO for a UM queue; NewJFS and
// NewJetty refuse the others with ErrNotSupported.
const (
	// OrderDefault is the order the provider gives anyway (order_type 0).
	OrderDefault OrderType = 0
	// OrderOT is target ordering: the target executes the requests in
	// the order they were posted.
	OrderOT OrderType = 1
	// OrderOI is initiator ordering: the initiator issues each request
	// once the ones before it are done.
	OrderOI OrderType = 2
	// OrderOL is low layer ordering: the transport delivers the requests
	// in order, as an RC connection does.
	OrderOL OrderType = 3
	// OrderNO is unreliable non ordering: no order is promised.
	OrderNO OrderType = 4
)

// String returns "DEFAULT", "OT", "OI", "OL" or "NO".
func (o OrderType) String() string { return provider.OrderType(o).String() }

// OrderCap is a set of order types, with the bits of
// urma_order_type_cap_t (OT bit 0, OI bit 1, OL bit 2, NO bit 3).
type OrderCap uint32

// Has reports whether o is in the set; OrderDefault always is.
func (c OrderCap) Has(o OrderType) bool { return provider.OrderCap(c).Has(provider.OrderType(o)) }

// String lists the order types, or "none".
func (c OrderCap) String() string { return provider.OrderCap(c).String() }
