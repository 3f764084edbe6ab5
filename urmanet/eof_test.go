package urmanet

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestEOFAfterPeerClosed: a peer writes more than half the window, sends
// its FIN and closes its Jetty before this side reads. The credits that
// reading returns go to a Jetty that is gone and fail; the reader must
// still get every byte and then io.EOF, since the FIN came before any
// of that.
func TestEOFAfterPeerClosed(t *testing.T) {
	uctx := loopbackCtx(t)
	c, s := fuzzPair(t, uctx)
	const per = 100
	var want []byte
	send := func(typ uint8, payload []byte) {
		t.Helper()
		i := firstData
		putHdr(s.slot(i), typ, 0, 0)
		copy(s.slot(i)[hdrSize:], payload)
		if err := s.sendLocked(i, hdrSize+len(payload)); err != nil {
			t.Fatal(err)
		}
		if cr := fuzzTake(t, s.jfc); !cr.OK() {
			t.Fatal(cr.Err())
		}
	}
	for k := range Window {
		p := bytes.Repeat([]byte{byte(k)}, per)
		send(msgData, p)
		want = append(want, p...)
	}
	send(msgFin, nil)
	s.mu.Lock()
	s.wclosed = true // its FIN went out above
	s.mu.Unlock()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	var got []byte
	buf := make([]byte, Window*per)
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read after %d of %d bytes: %v", len(got), len(want), err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, sent %d: differ", len(got), len(want))
	}
}
