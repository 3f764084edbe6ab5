package main

import (
	"bytes"
	"fmt"
)

// fillPing writes rping's ping data: "rdma-ping-N: ", then letters from
// start ('A'..'z', wrapping), and a zero last byte. It returns the next
// iteration's start letter.
func fillPing(b []byte, ping int, start byte) byte {
	n := copy(b, fmt.Sprintf("rdma-ping-%d: ", ping))
	c := start
	for i := n; i < len(b); i++ {
		b[i] = c
		if c++; c > 'z' {
			c = 'A'
		}
	}
	b[len(b)-1] = 0
	if start++; start > 'z' {
		start = 'A'
	}
	return start
}

// validate compares what came back with what was sent, as krping's
// memcmp does, and names the first differing byte.
func validate(sent, got []byte) error {
	if bytes.Equal(sent, got) {
		return nil
	}
	for i := range sent {
		if i >= len(got) || sent[i] != got[i] {
			return fmt.Errorf("data mismatch at byte %d of %d", i, len(sent))
		}
	}
	return fmt.Errorf("data mismatch: %d bytes back, %d sent", len(got), len(sent))
}

// cstrlen is strlen: the bytes before the first zero.
func cstrlen(b []byte) int {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return i
	}
	return len(b)
}
