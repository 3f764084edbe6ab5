//go:build !race

package loopback_test

import (
	"encoding/binary"
	"testing"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// A WRITE_NOTIFY takes the queue's own lists and stores its word in place:
// no allocation per request, as for a WRITE.
func TestWriteNotifyDoesNotAllocate(t *testing.T) {
	p := newPair(t)
	wrs := []jetty.WR{{Opcode: urma.OpWriteNotify, Flags: jetty.Signaled, To: p.remote,
		Local: []segment.SGE{p.src.SGE(0, 64)}, Remote: p.tgt.SGE(0, 64), Notify: p.tgt.SGE(4096, 8)}}
	var v uint64
	f := func() {
		v++
		wrs[0].Imm = v
		must(t, p.jfs.Post(wrs))
		p.pollOne(t, p.jfcA)
	}
	f()
	if n := testing.AllocsPerRun(1000, f); n != 0 {
		t.Errorf("WRITE_NOTIFY+poll: %.1f allocations per op, want 0", n)
	}
	if got := binary.NativeEndian.Uint64(p.dst.Bytes()[4096:]); got != v {
		t.Errorf("notify word %d, want %d", got, v)
	}
}
