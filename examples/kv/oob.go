package main

import (
	"encoding/binary"
	"fmt"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
)

// The out-of-band messages, big-endian, each one exutil message:
//
//	hello   client -> server  "KVH1" clients u16, window u16, value u16,
//	                          jfr token u32, clients x JFR descriptor (32 B)
//	welcome server -> client  "KVW1" workers u16, slot size u16,
//	                          region token u32, region descriptor (48 B),
//	                          jfr token u32, JFR descriptor (32 B)
//	refusal server -> client  "KVE1" reason (UTF-8, the rest)
//	done    both ways         "KVD1" requests u64: what the client sent,
//	                          then what the server served; the client then
//	                          frees its resources and hangs up, and the
//	                          server frees the session's after that
//
// The region is the server's request segment, [worker][client][window]
// slots of slot size bytes; the server JFR is only a Target for the
// client's RM JFS (an RM request names an imported JFR even when it is
// one-sided); the client JFRs receive the responses.
var (
	magicHello   = [4]byte{'K', 'V', 'H', '1'}
	magicWelcome = [4]byte{'K', 'V', 'W', '1'}
	magicRefusal = [4]byte{'K', 'V', 'E', '1'}
	magicDone    = [4]byte{'K', 'V', 'D', '1'}
)

// Limits on what a session may ask for.
const (
	maxClients = 256
	maxWindow  = 1024
	maxWorkers = 64
)

const (
	helloHeader = 4 + 2 + 2 + 2 + 4
	welcomeSize = 4 + 2 + 2 + 4 + segment.DescriptorSize + 4 + jetty.DescriptorSize
	doneSize    = 4 + 8
)

type hello struct {
	window   int
	value    int
	jfrToken uint32
	jfrs     []jetty.Descriptor // one per client
}

func (h hello) marshal() ([]byte, error) {
	if err := checkSession(len(h.jfrs), h.window, h.value); err != nil {
		return nil, err
	}
	b := append([]byte(nil), magicHello[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.jfrs)))
	b = binary.BigEndian.AppendUint16(b, uint16(h.window))
	b = binary.BigEndian.AppendUint16(b, uint16(h.value))
	b = binary.BigEndian.AppendUint32(b, h.jfrToken)
	for _, d := range h.jfrs {
		m, err := d.MarshalBinary()
		if err != nil {
			return nil, err
		}
		b = append(b, m...)
	}
	return b, nil
}

func parseHello(b []byte) (hello, error) {
	var h hello
	if len(b) < helloHeader || [4]byte(b[:4]) != magicHello {
		return h, fmt.Errorf("hello: %d bytes without the %q header", len(b), magicHello[:])
	}
	clients := int(binary.BigEndian.Uint16(b[4:]))
	h.window = int(binary.BigEndian.Uint16(b[6:]))
	h.value = int(binary.BigEndian.Uint16(b[8:]))
	h.jfrToken = binary.BigEndian.Uint32(b[10:])
	if err := checkSession(clients, h.window, h.value); err != nil {
		return h, fmt.Errorf("hello: %w", err)
	}
	if want := helloHeader + clients*jetty.DescriptorSize; len(b) != want {
		return h, fmt.Errorf("hello of %d bytes for %d clients, want %d", len(b), clients, want)
	}
	h.jfrs = make([]jetty.Descriptor, clients)
	for i := range h.jfrs {
		off := helloHeader + i*jetty.DescriptorSize
		if err := h.jfrs[i].UnmarshalBinary(b[off : off+jetty.DescriptorSize]); err != nil {
			return h, fmt.Errorf("hello: JFR of client %d: %w", i, err)
		}
	}
	return h, nil
}

// checkSession checks what a hello asks for.
func checkSession(clients, window, value int) error {
	switch {
	case clients < 1 || clients > maxClients:
		return fmt.Errorf("%d clients, want 1 to %d", clients, maxClients)
	case window < 1 || window > maxWindow:
		return fmt.Errorf("window %d, want 1 to %d", window, maxWindow)
	case value < 1 || value > maxValue:
		return fmt.Errorf("value size %d, want 1 to %d", value, maxValue)
	}
	return nil
}

type welcome struct {
	workers     int
	slot        int
	regionToken uint32
	region      segment.Descriptor
	jfrToken    uint32
	jfr         jetty.Descriptor
}

func (w welcome) marshal() ([]byte, error) {
	if w.workers < 1 || w.workers > maxWorkers || w.slot < slotTail || w.slot > 0xffff {
		return nil, fmt.Errorf("welcome: %d workers, slot of %d bytes", w.workers, w.slot)
	}
	b := append([]byte(nil), magicWelcome[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(w.workers))
	b = binary.BigEndian.AppendUint16(b, uint16(w.slot))
	b = binary.BigEndian.AppendUint32(b, w.regionToken)
	b, err := w.region.AppendBinary(b)
	if err != nil {
		return nil, err
	}
	b = binary.BigEndian.AppendUint32(b, w.jfrToken)
	m, err := w.jfr.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return append(b, m...), nil
}

// parseWelcome decodes a welcome, or returns the server's refusal as an
// error.
func parseWelcome(b []byte) (welcome, error) {
	var w welcome
	if len(b) >= 4 && [4]byte(b[:4]) == magicRefusal {
		return w, fmt.Errorf("server refused: %s", b[4:])
	}
	if len(b) != welcomeSize || [4]byte(b[:4]) != magicWelcome {
		return w, fmt.Errorf("welcome: %d bytes, want %d starting %q", len(b), welcomeSize, magicWelcome[:])
	}
	w.workers = int(binary.BigEndian.Uint16(b[4:]))
	w.slot = int(binary.BigEndian.Uint16(b[6:]))
	w.regionToken = binary.BigEndian.Uint32(b[8:])
	if w.workers < 1 || w.workers > maxWorkers || w.slot < slotTail || w.slot%8 != 0 {
		return w, fmt.Errorf("welcome: %d workers, slot of %d bytes", w.workers, w.slot)
	}
	off := 12
	if err := w.region.UnmarshalBinary(b[off : off+segment.DescriptorSize]); err != nil {
		return w, fmt.Errorf("welcome: region: %w", err)
	}
	off += segment.DescriptorSize
	w.jfrToken = binary.BigEndian.Uint32(b[off:])
	off += 4
	if err := w.jfr.UnmarshalBinary(b[off:]); err != nil {
		return w, fmt.Errorf("welcome: server JFR: %w", err)
	}
	return w, nil
}

// refusal tells a client why its hello was refused.
func refusal(reason error) []byte {
	msg := reason.Error()
	if len(msg) > 1024 {
		msg = msg[:1024]
	}
	return append(append([]byte(nil), magicRefusal[:]...), msg...)
}

func marshalDone(requests uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), magicDone[:]...), requests)
}

func parseDone(b []byte) (uint64, error) {
	if len(b) != doneSize || [4]byte(b[:4]) != magicDone {
		return 0, fmt.Errorf("done: %d bytes, want %d starting %q", len(b), doneSize, magicDone[:])
	}
	return binary.BigEndian.Uint64(b[4:]), nil
}
