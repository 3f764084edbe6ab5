package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
)

// The out-of-band exchange, big-endian, after the client connects:
//
//	hello   client -> server  window u16, value size u16, then a bootstrap
//	                          bundle of the clients' JFRs ("client0" ...)
//	reason  server -> client  length u16, why it refuses the hello (UTF-8),
//	                          empty to accept; then, if accepted, a bundle
//	                          of the request region ("region") and the
//	                          server's JFR ("server")
//	done    both ways         requests u64: what the client sent, then
//	                          what the server served; the client then
//	                          frees its resources and hangs up, and the
//	                          server frees the session's after that
//
// The region is the server's request segment, [worker][client][window]
// slots of slotSize(value) bytes: its length tells the client how many
// workers there are. The server JFR is only a Target for the client's RM
// JFS (an RM request names an imported JFR even when it is one-sided). In
// event mode the bundle also holds each worker's doorbell JFR ("bell0"
// ...), which the requests to that worker name instead (see bell). The
// client JFRs receive the responses.
type hello struct {
	Window, Value uint16
}

// Limits on what a session may ask for.
const (
	maxClients = 256
	maxWindow  = 1024
	maxWorkers = 64
)

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

// clientName names client i's JFR in the hello's bundle.
func clientName(i int) string { return "client" + strconv.Itoa(i) }

// regionWorkers is the number of workers whose parts make up a request
// region of size bytes.
func regionWorkers(size uint64, clients, window, value int) (int, error) {
	part := uint64(clients * window * slotSize(value))
	if size%part != 0 || size/part < 1 || size/part > maxWorkers {
		return 0, fmt.Errorf("a request region of %d bytes is not 1 to %d parts of %d (%d clients, window %d, %d-byte values)",
			size, maxWorkers, part, clients, window, value)
	}
	return int(size / part), nil
}

// writeReason sends the server's answer to a hello: the reason it refuses,
// empty to accept, after its length.
func writeReason(w io.Writer, reason string) error {
	reason = reason[:min(len(reason), math.MaxUint16)]
	_, err := w.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(reason))), reason...))
	return err
}

// readReason reads what writeReason sent.
func readReason(r io.Reader) (string, error) {
	var n uint16
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return string(b), err
}
