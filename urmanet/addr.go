package urmanet

import (
	"net"
	"strconv"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Network is the name Addr.Network returns.
const Network = "urma"

// Addr is a urmanet endpoint: the EID of a context and a port at it.
type Addr struct {
	EID  urma.EID
	Port uint16
}

var _ net.Addr = Addr{}

// Network returns "urma".
func (Addr) Network() string { return Network }

// String is "eid:port", an IPv6 EID in brackets (an IPv4-mapped EID in
// its IPv4 form).
func (a Addr) String() string {
	return net.JoinHostPort(a.EID.Addr().Unmap().String(), strconv.Itoa(int(a.Port)))
}

// ParseAddr parses what Addr.String writes: an EID (in brackets when it
// has colons) and a port from 1 to 65535.
func ParseAddr(s string) (Addr, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return Addr{}, provider.Errorf(urma.ErrInvalid, "urma address %q: %v", s, err)
	}
	eid, err := urma.ParseEID(host)
	if err != nil {
		return Addr{}, provider.Errorf(urma.ErrInvalid, "urma address %q: %v", s, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return Addr{}, provider.Errorf(urma.ErrInvalid, "urma address %q: port must be 1 to 65535", s)
	}
	return Addr{EID: eid, Port: uint16(p)}, nil
}
