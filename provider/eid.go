package provider

import (
	"net/netip"
	"strings"
)

// EID is a 16-byte URMA endpoint identifier, written like an IPv6 address.
// An IPv4 address maps to ::ffff:a.b.c.d.
type EID [16]byte

// EIDFromAddr converts an IP address; IPv4 addresses take the IPv4-mapped form.
func EIDFromAddr(a netip.Addr) EID { return EID(a.As16()) }

// ParseEID parses an EID in IPv6 text form, or an IPv4 address (mapped).
func ParseEID(s string) (EID, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || a.Zone() != "" {
		return EID{}, Errorf(ErrInvalid, "parse eid %q", s)
	}
	return EIDFromAddr(a), nil
}

// Addr returns the EID as an IP address (IPv4-mapped EIDs stay IPv6-typed;
// use Unmap on the result for the plain IPv4 form).
func (e EID) Addr() netip.Addr { return netip.AddrFrom16(e) }

// IsIPv4Mapped reports whether the EID is of the form ::ffff:a.b.c.d.
func (e EID) IsIPv4Mapped() bool { return e.Addr().Is4In6() }

// IsZero reports whether every byte is zero.
func (e EID) IsZero() bool { return e == EID{} }

// String returns the IPv6 text form; IPv4-mapped EIDs print as ::ffff:a.b.c.d.
func (e EID) String() string { return e.Addr().String() }

// MarshalText implements encoding.TextMarshaler.
func (e EID) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (e *EID) UnmarshalText(b []byte) error {
	v, err := ParseEID(string(b))
	if err != nil {
		return err
	}
	*e = v
	return nil
}
