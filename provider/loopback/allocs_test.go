//go:build !race

package loopback_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// The race detector allocates on its own, so this file is left out of -race
// builds; the default test run still checks it.
func TestDataPathDoesNotAllocate(t *testing.T) {
	p := newPair(t)
	var i uint64
	prepare := func(w jetty.WR) *jetty.Prepared {
		w.Flags, w.To = jetty.Signaled, p.remote
		pr, err := p.jfs.Prepare(w)
		must(t, err)
		return pr
	}
	write := prepare(jetty.WR{Opcode: urma.OpWrite, Local: []segment.SGE{p.src.SGE(0, 64)}, Remote: p.tgt.SGE(0, 64)})
	send := prepare(jetty.WR{Opcode: urma.OpSend, Local: []segment.SGE{p.src.SGE(0, 64)}})
	cas := prepare(jetty.WR{Opcode: urma.OpCAS, Local: []segment.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8)})
	recv, err := p.jfr.PrepareRecv([]jetty.RecvWR{{UserCtx: 2, Local: []segment.SGE{p.dst.SGE(0, 64)}}})
	must(t, err)
	cases := map[string]func(){
		"write+poll":     func() { p.writePoll(t, 64) },
		"send/recv+poll": func() { p.sendRecvPoll(t, 64) },
		"cas+poll":       func() { p.casPoll(t, i); i++ },
		"prepared write+poll": func() {
			must(t, write.Post())
			p.pollOne(t, p.jfcA)
		},
		"prepared send/recv+poll": func() {
			must(t, p.jfr.Recv(p.dst.SGE(0, 64), 2))
			must(t, send.Post())
			p.pollOne(t, p.jfcB)
			p.pollOne(t, p.jfcA)
		},
		"prepared recv, send+poll": func() {
			must(t, recv.Post())
			must(t, send.Post())
			p.pollOne(t, p.jfcB)
			p.pollOne(t, p.jfcA)
		},
		"prepared cas+poll": func() {
			cas.SetAtomic(i, i+1)
			i++
			must(t, cas.Post())
			p.pollOne(t, p.jfcA)
		},
	}
	for name, f := range cases {
		f() // warm up: first-use allocations are not steady state
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s: %.1f allocations per op, want 0", name, n)
		}
	}
}

// A sender that outruns its receiver queues its requests until receives
// arrive. The queue grows in blocks and an inline request's bytes go into
// buffers carved from one slab per block, so even the first pass over a
// fresh queue allocates per block, never per request.
func TestQueuedInlineSendsAllocatePerBlock(t *testing.T) {
	p := newPair(t)
	const n = 256
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		must(t, p.jfs.Send(p.remote, p.src.SGE(0, 8), jetty.Inline, uint64(i)))
	}
	for i := 0; i < n; i++ {
		must(t, p.jfr.Recv(p.dst.SGE(0, 8), uint64(i)))
	}
	for i := 0; i < n; i++ {
		p.pollOne(t, p.jfcB)
		p.pollOne(t, p.jfcA)
	}
	runtime.ReadMemStats(&after)
	// 8 blocks of 32 cost 2 allocations each, the queue's lists and its
	// retry timer a few more. The bound leaves room for the runtime; one
	// allocation per request would be 256 more.
	if got := after.Mallocs - before.Mallocs; got > n/4 {
		t.Errorf("%d queued inline sends allocated %d times, want at most %d", n, got, n/4)
	}
}

// A full queue is the ordinary back-pressure of a loop that posts faster
// than it polls, and its refusal is met over and over: it must allocate
// nothing, on every way of posting, sends and receives alike.
func TestFullQueueRefusalsDoNotAllocate(t *testing.T) {
	p := newPair(t)
	jfs, err := jetty.NewJFS(p.a, jetty.JFSConfig{JFC: p.jfcA, Depth: 2})
	must(t, err)
	t.Cleanup(func() { _ = jfs.Close() })
	jfr, err := jetty.NewJFR(p.b, jetty.JFRConfig{JFC: p.jfcB, Depth: 2})
	must(t, err)
	t.Cleanup(func() { _ = jfr.Close() })
	wrs := []jetty.WR{{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: p.remote,
		Local: []segment.SGE{p.src.SGE(0, 8)}, Remote: p.tgt.SGE(0, 8)}}
	pr, err := jfs.Prepare(wrs[0])
	must(t, err)
	for range 2 {
		must(t, jfs.Post(wrs))
		must(t, jfr.Recv(p.dst.SGE(0, 8), 1))
	}
	recvs := []jetty.RecvWR{{UserCtx: 2, Local: []segment.SGE{p.dst.SGE(0, 8)}}}
	prr, err := jfr.PrepareRecv(recvs)
	must(t, err)
	cases := map[string]func() error{
		"Post":              func() error { return jfs.Post(wrs) },
		"Write":             func() error { return jfs.Write(p.remote, p.tgt.SGE(0, 8), p.src.SGE(0, 8), 0, 3) },
		"Prepared.Post":     func() error { return pr.Post() },
		"PostRecv":          func() error { return jfr.PostRecv(recvs) },
		"Recv":              func() error { return jfr.Recv(p.dst.SGE(0, 8), 4) },
		"PreparedRecv.Post": func() error { return prr.Post() },
	}
	for name, f := range cases {
		err := f()
		if !errors.Is(err, urma.ErrAgain) {
			t.Fatalf("%s on a full queue: %v, want ErrAgain", name, err)
		}
		var pe *jetty.PostError
		if !errors.As(err, &pe) || pe.Index != 0 {
			t.Fatalf("%s on a full queue: %v, want a *PostError at index 0", name, err)
		}
		if n := testing.AllocsPerRun(1000, func() { _ = f() }); n != 0 {
			t.Errorf("%s on a full queue: %.1f allocations per refusal, want 0", name, n)
		}
	}
}
