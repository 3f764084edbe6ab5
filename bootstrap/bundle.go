// Package bootstrap hands a peer what it needs to reach your URMA objects:
// the descriptors of segments, JFRs and Jetties, with their tokens, in one
// Bundle that travels over any byte stream (a TCP or unix connection, a
// pipe, a file, a command line in hex). URMA leaves this first contact to
// the application; everything after it is RDMA.
//
// The owner adds its objects by name, the peer imports them by name:
//
//	var b bootstrap.Bundle
//	b.AddSegment("mem", seg, segToken)
//	b.AddJFR("inbox", jfr, jfrToken)
//	err := bootstrap.Write(ctx, conn, &b)
//
//	b, err := bootstrap.Read(ctx, conn)
//	target, err := b.ImportSegment(ctx, uctx, "mem")
//	remote, err := b.Import(ctx, uctx, "inbox")
//
// A bundle carries tokens, which are secrets: send it only over a channel
// that the peers trust (a unix socket, a connection of a private network,
// TLS).
package bootstrap

import (
	"context"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Limits of a bundle, so that a reader never holds more than a bounded
// amount for a peer's claims.
const (
	MaxEntries = 1024 // entries in one bundle
	MaxName    = 255  // bytes of an entry's name
)

// Kind says what an entry describes.
type Kind uint8

// The kinds of entries.
const (
	KindSegment Kind = 1 // a segment: import with ImportSegment
	KindJFR     Kind = 2 // a JFR: import with Import
	KindJetty   Kind = 3 // a Jetty: import with Import
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindSegment:
		return "segment"
	case KindJFR:
		return "jfr"
	case KindJetty:
		return "jetty"
	}
	return "kind " + strconv.Itoa(int(k))
}

// Entry is one object of a bundle: its name, its kind, its descriptor and
// the token a peer presents to import it.
type Entry struct {
	Name    string
	Kind    Kind
	Segment segment.Descriptor // KindSegment
	Jetty   jetty.Descriptor   // KindJFR, KindJetty
	Token   uint32
}

// Bundle is a set of named entries. The zero Bundle is empty and ready.
type Bundle struct {
	Entries []Entry
}

// AddSegment adds seg's descriptor and token under name.
func (b *Bundle) AddSegment(name string, seg *segment.Segment, token uint32) {
	b.Entries = append(b.Entries, Entry{Name: name, Kind: KindSegment, Segment: seg.Descriptor(), Token: token})
}

// AddJFR adds j's descriptor and token under name.
func (b *Bundle) AddJFR(name string, j *jetty.JFR, token uint32) {
	b.Entries = append(b.Entries, Entry{Name: name, Kind: KindJFR, Jetty: j.Descriptor(), Token: token})
}

// AddJetty adds j's descriptor and token under name.
func (b *Bundle) AddJetty(name string, j *jetty.Jetty, token uint32) {
	b.Entries = append(b.Entries, Entry{Name: name, Kind: KindJetty, Jetty: j.Descriptor(), Token: token})
}

// Lookup returns the entry named name.
func (b *Bundle) Lookup(name string) (Entry, error) {
	for _, e := range b.Entries {
		if e.Name == name {
			return e, nil
		}
	}
	names := make([]string, len(b.Entries))
	for i, e := range b.Entries {
		names[i] = e.Name
	}
	return Entry{}, provider.Errorf(urma.ErrNotFound, "bootstrap: no entry named %q (the bundle has: %s)", name, strings.Join(names, ", "))
}

// ImportSegment imports the segment named name into uctx, with its token;
// ctx bounds the import as for segment.Import.
func (b *Bundle) ImportSegment(ctx context.Context, uctx *urma.Context, name string) (*segment.Target, error) {
	e, err := b.Lookup(name)
	if err != nil {
		return nil, err
	}
	if e.Kind != KindSegment {
		return nil, provider.Errorf(urma.ErrInvalid, "bootstrap: %q is a %v, not a segment: import it with Import", name, e.Kind)
	}
	return segment.Import(ctx, uctx, e.Segment, e.Token)
}

// Import imports the JFR or Jetty named name into uctx, with its token: the
// Remote that requests name as their target. ctx bounds the import as for
// jetty.ImportJFR.
func (b *Bundle) Import(ctx context.Context, uctx *urma.Context, name string) (*jetty.Remote, error) {
	e, err := b.Lookup(name)
	if err != nil {
		return nil, err
	}
	switch e.Kind {
	case KindJFR:
		return jetty.ImportJFR(ctx, uctx, e.Jetty, e.Token)
	case KindJetty:
		return jetty.ImportJetty(ctx, uctx, e.Jetty, e.Token)
	}
	return nil, provider.Errorf(urma.ErrInvalid, "bootstrap: %q is a %v: import it with ImportSegment", name, e.Kind)
}

// The binary form: "URMB", version, entry count (u16), then each entry:
// kind, name length, name, token (u32), descriptor (48 bytes for a
// segment, 32 for a JFR or Jetty). Integers are big-endian.
const (
	magic   = "URMB"
	version = 1
	header  = len(magic) + 1 + 2
)

// MaxSize is the largest binary form of a bundle.
const MaxSize = header + MaxEntries*(1+1+MaxName+4+segment.DescriptorSize)

// MarshalBinary encodes the bundle. Names must be unique, non-empty and at
// most MaxName bytes; kinds must be one of the Kind constants.
func (b *Bundle) MarshalBinary() ([]byte, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	out := make([]byte, 0, header+len(b.Entries)*(1+1+16+4+segment.DescriptorSize))
	out = append(out, magic...)
	out = append(out, version)
	out = binary.BigEndian.AppendUint16(out, uint16(len(b.Entries)))
	for _, e := range b.Entries {
		out = append(out, byte(e.Kind), byte(len(e.Name)))
		out = append(out, e.Name...)
		out = binary.BigEndian.AppendUint32(out, e.Token)
		var desc []byte
		var err error
		if e.Kind == KindSegment {
			desc, err = e.Segment.MarshalBinary()
		} else {
			desc, err = e.Jetty.MarshalBinary()
		}
		out = append(out, desc...)
		if err != nil {
			return nil, provider.Errorf(urma.ErrInvalid, "bootstrap: entry %q: %v", e.Name, err)
		}
	}
	return out, nil
}

// check refuses a bundle that MarshalBinary cannot encode or that
// UnmarshalBinary would refuse.
func (b *Bundle) check() error {
	if len(b.Entries) > MaxEntries {
		return provider.Errorf(urma.ErrInvalid, "bootstrap: %d entries, at most %d", len(b.Entries), MaxEntries)
	}
	seen := make(map[string]bool, len(b.Entries))
	for i, e := range b.Entries {
		switch {
		case e.Name == "" || len(e.Name) > MaxName:
			return provider.Errorf(urma.ErrInvalid, "bootstrap: entry %d: a name of %d bytes, want 1 to %d", i, len(e.Name), MaxName)
		case seen[e.Name]:
			return provider.Errorf(urma.ErrInvalid, "bootstrap: two entries named %q", e.Name)
		case e.Kind < KindSegment || e.Kind > KindJetty:
			return provider.Errorf(urma.ErrInvalid, "bootstrap: entry %q: unknown kind %d", e.Name, e.Kind)
		case e.Kind == KindJFR && e.Jetty.Kind != jetty.KindJFR, e.Kind == KindJetty && e.Jetty.Kind != jetty.KindJetty:
			return provider.Errorf(urma.ErrInvalid, "bootstrap: entry %q: a %v descriptor in a %v entry", e.Name, e.Jetty.Kind, e.Kind)
		}
		seen[e.Name] = true
	}
	return nil
}

// UnmarshalBinary decodes a bundle MarshalBinary made. Malformed input
// (a wrong magic or version, a short or long buffer, a bad descriptor, a
// duplicate name) is refused with urma.ErrInvalid and leaves b unchanged.
func (b *Bundle) UnmarshalBinary(data []byte) error {
	bad := func(format string, args ...any) error {
		return provider.Errorf(urma.ErrInvalid, "bootstrap: "+format, args...)
	}
	if len(data) < header || string(data[:len(magic)]) != magic {
		return bad("not a bundle (%d bytes, no %q header)", len(data), magic)
	}
	if v := data[len(magic)]; v != version {
		return bad("bundle version %d, this reads version %d", v, version)
	}
	n := int(binary.BigEndian.Uint16(data[len(magic)+1:]))
	if n > MaxEntries {
		return bad("%d entries, at most %d", n, MaxEntries)
	}
	rest := data[header:]
	entries := make([]Entry, 0, min(n, len(rest)/(1+1+1+4+jetty.DescriptorSize)+1))
	for i := range n {
		if len(rest) < 2 {
			return bad("entry %d: cut short", i)
		}
		e := Entry{Kind: Kind(rest[0])}
		nameLen := int(rest[1])
		rest = rest[2:]
		size := jetty.DescriptorSize
		if e.Kind == KindSegment {
			size = segment.DescriptorSize
		}
		if len(rest) < nameLen+4+size {
			return bad("entry %d: cut short", i)
		}
		e.Name = string(rest[:nameLen])
		e.Token = binary.BigEndian.Uint32(rest[nameLen:])
		desc := rest[nameLen+4 : nameLen+4+size]
		rest = rest[nameLen+4+size:]
		var err error
		switch e.Kind {
		case KindSegment:
			err = e.Segment.UnmarshalBinary(desc)
		case KindJFR, KindJetty:
			err = e.Jetty.UnmarshalBinary(desc)
		default:
			return bad("entry %d: unknown kind %d", i, e.Kind)
		}
		if err != nil {
			return bad("entry %d (%q): %v", i, e.Name, err)
		}
		entries = append(entries, e)
	}
	if len(rest) != 0 {
		return bad("%d bytes after the last entry", len(rest))
	}
	next := Bundle{Entries: entries}
	if err := next.check(); err != nil {
		return err
	}
	b.Entries = slices.Clip(entries)
	return nil
}
