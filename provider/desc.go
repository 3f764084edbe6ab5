package provider

import (
	"encoding/binary"
	"fmt"
)

// SegmentDesc is what a peer needs to import a segment: where it lives
// (eid, uasid, va, len), what it allows (access, token policy) and which
// token id protects it. The token value itself is a secret and travels
// separately.
type SegmentDesc struct {
	EID         EID
	UASID       uint32
	VA          uint64
	Len         uint64
	Access      Access
	TokenPolicy TokenPolicy
	TokenID     uint32
}

// SegmentDescSize is the length of a marshalled SegmentDesc.
const SegmentDescSize = 48

var segMagic = [4]byte{'U', 'R', 'S', 'G'}

const descVersion = 1

// jettyDescVersion 2 encodes the kind with urma_target_type_t's values
// (a JFR is 0); version 1 numbered kinds otherwise and is refused.
const jettyDescVersion = 2

// String is a one-line human form.
func (d SegmentDesc) String() string {
	return fmt.Sprintf("seg{eid=%v uasid=%d va=%#x len=%d access=%v token=%v/%d}",
		d.EID, d.UASID, d.VA, d.Len, d.Access, d.TokenPolicy, d.TokenID)
}

// Validate checks what UnmarshalBinary and Import need to hold.
func (d SegmentDesc) Validate() error {
	if d.Len == 0 {
		return Errorf(ErrInvalid, "segment descriptor: zero length")
	}
	if d.VA+d.Len < d.VA {
		return Errorf(ErrInvalid, "segment descriptor: va %#x + len %d overflows", d.VA, d.Len)
	}
	if err := d.Access.Validate(); err != nil {
		return err
	}
	if d.TokenPolicy > TokenAllEncrypted {
		return Errorf(ErrInvalid, "segment descriptor: unknown token policy %d", d.TokenPolicy)
	}
	return nil
}

// MarshalBinary encodes the descriptor in 48 bytes, big-endian:
// magic "URSG", version, access, token policy, reserved, eid, uasid,
// token id, va, len.
func (d SegmentDesc) MarshalBinary() ([]byte, error) {
	return d.AppendBinary(make([]byte, 0, SegmentDescSize))
}

// AppendBinary appends the 48-byte encoding to b.
func (d SegmentDesc) AppendBinary(b []byte) ([]byte, error) {
	if err := d.Validate(); err != nil {
		return b, err
	}
	b = append(b, segMagic[:]...)
	b = append(b, descVersion, byte(d.Access), byte(d.TokenPolicy), 0)
	b = append(b, d.EID[:]...)
	b = binary.BigEndian.AppendUint32(b, d.UASID)
	b = binary.BigEndian.AppendUint32(b, d.TokenID)
	b = binary.BigEndian.AppendUint64(b, d.VA)
	b = binary.BigEndian.AppendUint64(b, d.Len)
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary wrote and rejects anything else:
// a wrong length, magic or version, a non-zero reserved byte, unknown access
// bits or token policy, a zero length or an overflowing range.
func (d *SegmentDesc) UnmarshalBinary(b []byte) error {
	if len(b) != SegmentDescSize {
		return Errorf(ErrInvalid, "segment descriptor: %d bytes, want %d", len(b), SegmentDescSize)
	}
	if [4]byte(b[:4]) != segMagic {
		return Errorf(ErrInvalid, "segment descriptor: bad magic %q", b[:4])
	}
	if b[4] != descVersion {
		return Errorf(ErrInvalid, "segment descriptor: unsupported version %d", b[4])
	}
	if b[7] != 0 {
		return Errorf(ErrInvalid, "segment descriptor: reserved byte is %#x", b[7])
	}
	v := SegmentDesc{
		Access:      Access(b[5]),
		TokenPolicy: TokenPolicy(b[6]),
		EID:         EID(b[8:24]),
		UASID:       binary.BigEndian.Uint32(b[24:]),
		TokenID:     binary.BigEndian.Uint32(b[28:]),
		VA:          binary.BigEndian.Uint64(b[32:]),
		Len:         binary.BigEndian.Uint64(b[40:]),
	}
	if err := v.Validate(); err != nil {
		return err
	}
	*d = v
	return nil
}

// JettyKind says what a JettyDesc names, with the values of
// urma_target_type_t.
type JettyKind uint8

// Kinds of remote receive endpoints.
const (
	KindJFR   JettyKind = 0
	KindJetty JettyKind = 1
	// KindJettyGroup is a jetty group (see GroupContext).
	KindJettyGroup JettyKind = 2
)

// String returns the URMA name: "JFR", "JETTY" or "JETTY_GROUP".
func (k JettyKind) String() string {
	switch k {
	case KindJFR:
		return "JFR"
	case KindJetty:
		return "JETTY"
	case KindJettyGroup:
		return "JETTY_GROUP"
	}
	return fmt.Sprintf("JettyKind(%d)", uint8(k))
}

// JettyID names a jetty, JFS or JFR: {eid, uasid, id} as urma_jetty_id_t.
type JettyID struct {
	EID   EID
	UASID uint32
	ID    uint32
}

// String is "eid/uasid/id".
func (j JettyID) String() string { return fmt.Sprintf("%v/%d/%d", j.EID, j.UASID, j.ID) }

// JettyDesc is what a peer needs to import a JFR or Jetty: its id, kind,
// transport mode and token policy. The token value travels separately.
type JettyDesc struct {
	ID          JettyID
	Kind        JettyKind
	Mode        TransportMode
	TokenPolicy TokenPolicy
}

// JettyDescSize is the length of a marshalled JettyDesc.
const JettyDescSize = 32

var jettyMagic = [4]byte{'U', 'R', 'J', 'T'}

// String is a one-line human form.
func (d JettyDesc) String() string {
	return fmt.Sprintf("%v{%v mode=%v token=%v}", d.Kind, d.ID, d.Mode, d.TokenPolicy)
}

// Validate checks the kind, mode and token policy.
func (d JettyDesc) Validate() error {
	if d.Kind == KindJettyGroup && d.Mode != RM {
		return Errorf(ErrInvalid, "jetty descriptor: a jetty group is RM, not %v", d.Mode)
	}
	if d.Kind > KindJettyGroup {
		return Errorf(ErrInvalid, "jetty descriptor: unknown kind %d", d.Kind)
	}
	if !d.Mode.Valid() {
		return Errorf(ErrInvalid, "jetty descriptor: unknown transport mode %#x", uint8(d.Mode))
	}
	if d.TokenPolicy > TokenAllEncrypted {
		return Errorf(ErrInvalid, "jetty descriptor: unknown token policy %d", d.TokenPolicy)
	}
	return nil
}

// MarshalBinary encodes the descriptor in 32 bytes, big-endian: magic
// "URJT", version, kind, mode, token policy, eid, uasid, id.
func (d JettyDesc) MarshalBinary() ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, JettyDescSize)
	b = append(b, jettyMagic[:]...)
	b = append(b, jettyDescVersion, byte(d.Kind), byte(d.Mode), byte(d.TokenPolicy))
	b = append(b, d.ID.EID[:]...)
	b = binary.BigEndian.AppendUint32(b, d.ID.UASID)
	b = binary.BigEndian.AppendUint32(b, d.ID.ID)
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary wrote and rejects anything else.
func (d *JettyDesc) UnmarshalBinary(b []byte) error {
	if len(b) != JettyDescSize {
		return Errorf(ErrInvalid, "jetty descriptor: %d bytes, want %d", len(b), JettyDescSize)
	}
	if [4]byte(b[:4]) != jettyMagic {
		return Errorf(ErrInvalid, "jetty descriptor: bad magic %q", b[:4])
	}
	if b[4] != jettyDescVersion {
		return Errorf(ErrInvalid, "jetty descriptor: unsupported version %d", b[4])
	}
	v := JettyDesc{
		Kind:        JettyKind(b[5]),
		Mode:        TransportMode(b[6]),
		TokenPolicy: TokenPolicy(b[7]),
		ID: JettyID{
			EID:   EID(b[8:24]),
			UASID: binary.BigEndian.Uint32(b[24:]),
			ID:    binary.BigEndian.Uint32(b[28:]),
		},
	}
	if err := v.Validate(); err != nil {
		return err
	}
	*d = v
	return nil
}
