package bootstrap_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// owner is a context with one object of each kind, in a bundle.
type owner struct {
	uctx *urma.Context
	seg  *segment.Segment
	jfr  *jetty.JFR
	jt   *jetty.Jetty
	b    bootstrap.Bundle
}

func newOwner(t *testing.T, eid int) *owner {
	dev, err := urma.DeviceByName("loopback0")
	require.NoError(t, err)
	o := &owner{}
	o.uctx, err = urma.Open(dev, eid, nil)
	require.NoError(t, err)
	t.Cleanup(func() { o.uctx.Close() })
	o.seg, err = segment.Alloc(o.uctx, 64, segment.Config{Access: segment.Read | segment.Write,
		TokenPolicy: segment.TokenPlainText, Token: 11})
	require.NoError(t, err)
	jfc, err := jetty.NewJFC(o.uctx, jetty.JFCConfig{})
	require.NoError(t, err)
	o.jfr, err = jetty.NewJFR(o.uctx, jetty.JFRConfig{JFC: jfc, Depth: 16, TokenPolicy: segment.TokenPlainText, Token: 22})
	require.NoError(t, err)
	o.jt, err = jetty.NewJetty(o.uctx, jetty.JettyConfig{Send: jetty.JFSConfig{JFC: jfc, Depth: 16}, Recv: jetty.JFRConfig{Depth: 16}})
	require.NoError(t, err)
	o.b.AddSegment("mem", o.seg, 11)
	o.b.AddJFR("inbox", o.jfr, 22)
	o.b.AddJetty("peer", o.jt, 0)
	return o
}

func TestRoundTripAndImport(t *testing.T) {
	o := newOwner(t, 0)
	data, err := o.b.MarshalBinary()
	require.NoError(t, err)
	var got bootstrap.Bundle
	require.NoError(t, got.UnmarshalBinary(data))
	require.Equal(t, o.b, got)

	peer := newOwner(t, 1)
	tg, err := got.ImportSegment(t.Context(), peer.uctx, "mem")
	require.NoError(t, err)
	require.Equal(t, o.seg.Descriptor(), tg.Descriptor())
	r, err := got.Import(t.Context(), peer.uctx, "inbox")
	require.NoError(t, err)
	require.Equal(t, o.jfr.Descriptor(), r.Descriptor())
	_, err = got.Import(t.Context(), peer.uctx, "peer")
	require.NoError(t, err)

	_, err = got.Import(t.Context(), peer.uctx, "mem")
	require.ErrorIs(t, err, urma.ErrInvalid, "a segment through Import")
	_, err = got.ImportSegment(t.Context(), peer.uctx, "inbox")
	require.ErrorIs(t, err, urma.ErrInvalid, "a JFR through ImportSegment")
	_, err = got.Import(t.Context(), peer.uctx, "nope")
	require.ErrorIs(t, err, urma.ErrNotFound)
	require.ErrorContains(t, err, "mem, inbox, peer")

	got.Entries[0].Token = 12 // a wrong token is the owner's to refuse
	_, err = got.ImportSegment(t.Context(), peer.uctx, "mem")
	require.ErrorIs(t, err, urma.ErrPermission)
}

func TestMalformed(t *testing.T) {
	o := newOwner(t, 0)
	good, err := o.b.MarshalBinary()
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"empty":          nil,
		"no magic":       append([]byte("XXXX"), good[4:]...),
		"version 2":      append(append([]byte("URMB"), 2), good[5:]...),
		"cut short":      good[:len(good)-1],
		"trailing bytes": append(bytes.Clone(good), 0),
		"count too big":  append([]byte("URMB\x01\xff\xff"), good[7:]...),
		"unknown kind":   append(append(bytes.Clone(good[:7]), 9), good[8:]...),
	} {
		b := o.b
		require.ErrorIs(t, b.UnmarshalBinary(data), urma.ErrInvalid, name)
		require.Equal(t, o.b, b, "%s: a refused input changes nothing", name)
	}

	for name, b := range map[string]bootstrap.Bundle{
		"empty name":     {Entries: []bootstrap.Entry{{Kind: bootstrap.KindSegment, Segment: o.seg.Descriptor()}}},
		"long name":      {Entries: []bootstrap.Entry{{Name: strings.Repeat("x", 256), Kind: bootstrap.KindSegment, Segment: o.seg.Descriptor()}}},
		"duplicate name": {Entries: []bootstrap.Entry{o.b.Entries[0], o.b.Entries[0]}},
		"kind mismatch":  {Entries: []bootstrap.Entry{{Name: "x", Kind: bootstrap.KindJetty, Jetty: o.jfr.Descriptor()}}},
	} {
		_, err := b.MarshalBinary()
		require.ErrorIs(t, err, urma.ErrInvalid, name)
	}
}

func TestExchangeOverAConnection(t *testing.T) {
	a, b := newOwner(t, 0), newOwner(t, 1)
	ca, cb := net.Pipe()
	defer ca.Close()
	defer cb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan *bootstrap.Bundle, 1)
	go func() {
		got, err := bootstrap.Exchange(ctx, cb, &b.b)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	got, err := bootstrap.Exchange(ctx, ca, &a.b)
	require.NoError(t, err)
	require.Equal(t, b.b, *got)
	require.Equal(t, a.b, *<-done)
}

func TestReadEndsWithItsContext(t *testing.T) {
	ca, cb := net.Pipe()
	defer ca.Close()
	defer cb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := bootstrap.Read(ctx, ca) // nobody writes
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, urma.ErrTimeout)
	require.Less(t, time.Since(start), 5*time.Second)

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = bootstrap.Read(ctx, ca)
	require.ErrorIs(t, err, context.Canceled)

	// The stream stays usable after an interrupted read.
	go func() { _ = bootstrap.Write(context.Background(), cb, &bootstrap.Bundle{}) }()
	got, err := bootstrap.Read(context.Background(), ca)
	require.NoError(t, err)
	require.Empty(t, got.Entries)
}

func TestReadRefusesOversizedMessage(t *testing.T) {
	msg := []byte{0xff, 0xff, 0xff, 0xff}
	_, err := bootstrap.Read(context.Background(), bytes.NewReader(msg))
	require.ErrorIs(t, err, urma.ErrInvalid)
	_, err = bootstrap.Read(context.Background(), bytes.NewReader([]byte{0, 0}))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "a message cut short")
	_, err = bootstrap.Read(context.Background(), bytes.NewReader(nil))
	require.ErrorIs(t, err, io.EOF, "a stream that ended")
}

func FuzzUnmarshal(f *testing.F) {
	var b bootstrap.Bundle
	b.Entries = []bootstrap.Entry{{Name: "x", Kind: bootstrap.KindSegment}}
	f.Add([]byte("URMB\x01\x00\x00"))
	f.Add([]byte("URMB\x01\x00\x01\x01\x01x\x00\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got bootstrap.Bundle
		if got.UnmarshalBinary(data) != nil {
			return
		}
		again, err := got.MarshalBinary()
		if err != nil {
			t.Fatalf("a bundle UnmarshalBinary took does not marshal: %v", err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("round trip changed the bytes")
		}
	})
}
