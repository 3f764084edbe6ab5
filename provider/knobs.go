package provider

import "fmt"

// OrderType is a queue's order type, with the values of urma_order_type_t.
type OrderType uint8

// Order types.
const (
	OrderDefault OrderType = iota // what the provider gives anyway
	OrderOT                       // target ordering
	OrderOI                       // initiator ordering
	OrderOL                       // low layer ordering
	OrderNO                       // unreliable non ordering
)

// Valid reports whether o is one of the order types.
func (o OrderType) Valid() bool { return o <= OrderNO }

// String returns "DEFAULT", "OT", "OI", "OL" or "NO".
func (o OrderType) String() string {
	names := []string{"DEFAULT", "OT", "OI", "OL", "NO"}
	if o.Valid() {
		return names[o]
	}
	return fmt.Sprintf("OrderType(%d)", uint8(o))
}

// OrderCap is a set of order types, with the bits of
// urma_order_type_cap_t: OT bit 0, OI bit 1, OL bit 2, NO bit 3.
type OrderCap uint32

// OrderCapOf builds the set from order types; OrderDefault adds nothing.
func OrderCapOf(os ...OrderType) OrderCap {
	var c OrderCap
	for _, o := range os {
		if o != OrderDefault && o.Valid() {
			c |= 1 << (o - 1)
		}
	}
	return c
}

// Has reports whether o is in the set; OrderDefault always is.
func (c OrderCap) Has(o OrderType) bool {
	if o == OrderDefault {
		return true
	}
	return o.Valid() && c&(1<<(o-1)) != 0
}

// String lists the order types.
func (c OrderCap) String() string {
	s := ""
	for o := OrderOT; o <= OrderNO; o++ {
		if c.Has(o) {
			if s != "" {
				s += ","
			}
			s += o.String()
		}
	}
	if s == "" {
		return "none"
	}
	return s
}

// RxThresholder is implemented by the JFR and Jetty of a provider whose
// DeviceAttr.RxThreshold is set (urma_modify_jfr and urma_modify_jetty
// with the RX_THRESHOLD mask).
type RxThresholder interface {
	// SetRxThreshold arms the receive threshold n, or disarms it when n
	// is 0: once fewer than n receives are posted, after a message took
	// one, the queue raises EventJFRLimit (a JFR) or EventJettyLimit (a
	// Jetty's own receive queue) and disarms. A shared JFR raises its
	// own event.
	SetRxThreshold(n int) error
}
