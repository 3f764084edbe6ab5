package segment

import (
	"reflect"

	"github.com/urma-go/sdk/internal/layout"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Access is a set of access rights, with the URMA_ACCESS_* values.
type Access uint8

// Access rights.
const (
	// LocalOnly grants every right to this process and none to peers.
	LocalOnly Access = 0x1
	Read      Access = 0x2
	Write     Access = 0x4
	Atomic    Access = 0x8
)

// Validate checks the combination: at least one bit, no unknown bits,
// LocalOnly alone, Write with Read, Atomic with Read and Write.
func (a Access) Validate() error { return provider.Access(a).Validate() }

// String lists the bits, e.g. "READ|WRITE".
func (a Access) String() string { return provider.Access(a).String() }

// TokenPolicy says how a token protects a segment or a jetty, with the
// URMA_TOKEN_* values.
type TokenPolicy uint8

// Token policies. Providers of this SDK implement TokenNone and
// TokenPlainText; the others are refused with urma.ErrNotSupported.
const (
	TokenNone         TokenPolicy = 0
	TokenPlainText    TokenPolicy = 1
	TokenSigned       TokenPolicy = 2
	TokenAllEncrypted TokenPolicy = 3
)

// String returns the URMA name, e.g. "PLAIN_TEXT".
func (p TokenPolicy) String() string { return provider.TokenPolicy(p).String() }

// Descriptor is what a peer needs to import a segment: where it is, its
// rights and its token policy. The token value travels separately. It
// marshals to DescriptorSize bytes; UnmarshalBinary rejects malformed input.
type Descriptor struct {
	EID         urma.EID
	UASID       uint32
	VA          uint64
	Len         uint64
	Access      Access
	TokenPolicy TokenPolicy
	TokenID     uint32
}

// DescriptorSize is the length of a marshalled Descriptor.
const DescriptorSize = 48

// DescriptorOf converts the provider's form.
func DescriptorOf(p provider.SegmentDesc) Descriptor {
	return Descriptor{EID: urma.EID(p.EID), UASID: p.UASID, VA: p.VA, Len: p.Len,
		Access: Access(p.Access), TokenPolicy: TokenPolicy(p.TokenPolicy), TokenID: p.TokenID}
}

// Raw is the provider's form.
func (d Descriptor) Raw() provider.SegmentDesc {
	return provider.SegmentDesc{EID: provider.EID(d.EID), UASID: d.UASID, VA: d.VA, Len: d.Len,
		Access: provider.Access(d.Access), TokenPolicy: provider.TokenPolicy(d.TokenPolicy), TokenID: d.TokenID}
}

// String is a one-line human form.
func (d Descriptor) String() string { return d.Raw().String() }

// Validate checks the length, the range and the rights.
func (d Descriptor) Validate() error { return d.Raw().Validate() }

// MarshalBinary encodes the descriptor in DescriptorSize bytes.
func (d Descriptor) MarshalBinary() ([]byte, error) { return d.Raw().MarshalBinary() }

// AppendBinary appends the encoding to b.
func (d Descriptor) AppendBinary(b []byte) ([]byte, error) { return d.Raw().AppendBinary(b) }

// UnmarshalBinary decodes what MarshalBinary wrote and rejects anything
// else, leaving d unchanged then.
func (d *Descriptor) UnmarshalBinary(b []byte) error {
	var p provider.SegmentDesc
	if err := p.UnmarshalBinary(b); err != nil {
		return err
	}
	*d = DescriptorOf(p)
	return nil
}

// SGE is one scatter/gather element: Len bytes at virtual address Addr of
// a segment, an imported target or a view. Build one with Segment.SGE,
// Target.SGE or View.SGE, which name the memory; Addr and Len may then be
// adjusted. An SGE whose memory is not named is refused when posted.
type SGE struct {
	mem  provider.MemRef
	Addr uint64
	Len  uint32
}

func init() { layout.Must(reflect.TypeFor[SGE](), reflect.TypeFor[provider.SGE]()) }

// Raw is the provider's form.
func (s SGE) Raw() provider.SGE { return provider.SGE{Seg: s.mem, Addr: s.Addr, Len: s.Len} }

// SGEOf converts the provider's form.
func SGEOf(p provider.SGE) SGE { return SGE{mem: p.Seg, Addr: p.Addr, Len: p.Len} }
