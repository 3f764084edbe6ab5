// Package perf is urmactl perf: perftest-style latency and bandwidth tests
// of READ, WRITE, SEND and atomics between two processes, on any provider.
// The client drives; the server follows the client's settings, which come
// with the client's descriptors over an out-of-band TCP connection.
package perf

import (
	"fmt"
	"strings"
	"time"

	"github.com/urma-go/sdk/urma"
)

// Op is the operation a test measures.
type Op int

// The operations.
const (
	Read Op = iota
	Write
	Send
	Atomic
)

var opNames = [...]string{"read", "write", "send", "atomic"}

// String is the operation's name in test names: "read", "write"...
func (o Op) String() string { return opNames[o] }

// Test is an operation and whether its bandwidth (else its latency) is
// measured: write_lat, send_bw...
type Test struct {
	Op Op
	BW bool
}

// Tests lists every test name, in the order urmactl's help shows them.
func Tests() []string {
	var names []string
	for o := range opNames {
		for _, bw := range []bool{false, true} {
			names = append(names, Test{Op(o), bw}.String())
		}
	}
	return names
}

// ParseTest reads a test name such as "write_lat".
func ParseTest(s string) (Test, error) {
	for _, n := range Tests() {
		if n == s {
			op, kind, _ := strings.Cut(s, "_")
			for o, name := range opNames {
				if name == op {
					return Test{Op(o), kind == "bw"}, nil
				}
			}
		}
	}
	return Test{}, fmt.Errorf("unknown test %q (want one of %s)", s, strings.Join(Tests(), ", "))
}

// String is the test's name, e.g. "write_lat".
func (t Test) String() string {
	if t.BW {
		return t.Op.String() + "_bw"
	}
	return t.Op.String() + "_lat"
}

// halved reports whether the test times a round trip and reports half of
// it, as perftest does for write_lat and send_lat.
func (t Test) halved() bool { return !t.BW && (t.Op == Write || t.Op == Send) }

// Config is one run of a test; Defaults fills what is left zero.
type Config struct {
	Test Test
	// Sizes are the message sizes, run in turn (-s, or -a for every power
	// of two from 2 B to 8 MiB). Atomics are 8 bytes: an atomic test
	// takes no other size.
	Sizes []int
	// Iters is the number of requests per size (-n), unless Duration is
	// set (-D): then each size runs that long.
	Iters    int
	Duration time.Duration
	Mode     urma.TransportMode
	// Event waits for completions on a JFCE instead of busy-polling (-e).
	Event bool
	// Spin is how long event mode polls before it sleeps on the JFCE
	// (--spin): spin, then park. Zero sleeps after the first empty poll.
	Spin time.Duration
	// Inline sends requests of up to Inline bytes inline (-I); -1 takes
	// the device's maximum, 0 never inlines.
	Inline int
	// CAS selects compare-and-swap for the atomic tests (-A cas), else
	// fetch-and-add.
	CAS bool
	// TxDepth is the number of requests in flight (-T); RxDepth the
	// receives posted for SEND (-R).
	TxDepth, RxDepth int
	// PostList posts that many requests per Post call (-l).
	PostList int
	// CQMod signals one request in CQMod (-Q); the others complete
	// silently.
	CQMod int
	// Tuned runs the loops tuned past what the plain API gives (--tuned):
	// requests prepared once and posted from their handles
	// (jetty.Prepared, jetty.PreparedRecv), the next latency request
	// posted from the poll or the memory wait that releases it
	// (Prepared.PostAfter, Prepared.PostWhen), JFC.PollWait, and
	// lock-free queues. Otherwise the loops are what a user writes from
	// the jetty package's documentation: Post of a []jetty.WR, PostRecv,
	// JFC.Poll (or, in event mode, Rearm and Wait), queues of default
	// configuration.
	Tuned bool
	// LockFree creates the queues lock-free (-L, as urma_perftest's
	// --lock_free): the run's loop is the only goroutine that posts to
	// them and polls their JFCs. Tuned implies it.
	LockFree bool
	// Warmup is how many requests a bandwidth test runs, untimed, before
	// each size's timed ones (--warmup), as ucx_perftest's warm-up: the first
	// messages of a run map the peer's buffers and fault in the rings'
	// pages, which a short run would otherwise count. Latency tests take
	// none (they report medians).
	Warmup int
}

// DefaultWarmup is the warm-up of bandwidth tests unless --warmup says
// otherwise: ucx_perftest's default.
const DefaultWarmup = 10000

// Limits of the options.
const (
	MaxSize    = 8 << 20
	maxSamples = 1 << 24
	atomicSize = 8
)

// AllSizes is -a: every power of two from 2 bytes to max.
func AllSizes(max int) []int {
	var s []int
	for n := 2; n <= max; n *= 2 {
		s = append(s, n)
	}
	return s
}

// Defaults fills zero fields with urma_perftest's defaults: RM mode;
// 10000 iterations for latency, 50000 for bandwidth; 2-byte messages for
// latency, 64 KiB for bandwidth; depth 1 for latency, 128 for bandwidth;
// 512 receives; signaling every request for latency, every 100th for
// bandwidth (at most one per depth, as urma_perftest caps its cq_mod).
func (c Config) Defaults() Config {
	if c.Mode == 0 {
		c.Mode = urma.RM
	}
	if len(c.Sizes) == 0 {
		switch {
		case c.Test.Op == Atomic:
			c.Sizes = []int{atomicSize}
		case c.Test.BW:
			c.Sizes = []int{64 << 10}
		default:
			c.Sizes = []int{2}
		}
	}
	if c.Iters == 0 {
		c.Iters = 10000
		if c.Test.BW {
			c.Iters = 50000
		}
	}
	if c.TxDepth == 0 {
		c.TxDepth = 1
		if c.Test.BW {
			c.TxDepth = 128
		}
	}
	if c.RxDepth == 0 {
		c.RxDepth = 512
	}
	if c.PostList == 0 {
		c.PostList = 1
	}
	if c.CQMod == 0 {
		c.CQMod = 1
		if c.Test.BW {
			c.CQMod = min(100, c.TxDepth)
		}
	}
	return c
}

// Validate checks a config after Defaults.
func (c Config) Validate() error {
	switch {
	case c.Mode != urma.RC && c.Mode != urma.RM && c.Mode != urma.UM:
		return fmt.Errorf("mode %v: want RM, RC or UM", c.Mode)
	case c.Mode == urma.UM && c.Test.Op != Send:
		return fmt.Errorf("%v needs a connection: UM carries only SEND (use -p RC or RM)", c.Test)
	case c.Iters < 1 || c.Iters > maxSamples:
		return fmt.Errorf("iterations %d: want 1 to %d", c.Iters, maxSamples)
	case c.Spin < 0:
		return fmt.Errorf("spin %v is negative", c.Spin)
	case c.Spin > 0 && !c.Event:
		return fmt.Errorf("spin %v is the budget before sleeping in event mode: add -e", c.Spin)
	case c.Duration < 0:
		return fmt.Errorf("duration %v is negative", c.Duration)
	case c.TxDepth < 1 || c.RxDepth < 1:
		return fmt.Errorf("depths must be positive (tx %d, rx %d)", c.TxDepth, c.RxDepth)
	case !c.Test.BW && (c.PostList != 1 || c.CQMod != 1):
		return fmt.Errorf("post list and completion moderation are for bandwidth tests: %v posts and signals one request at a time", c.Test)
	case c.PostList < 1 || c.PostList > c.TxDepth:
		return fmt.Errorf("post list %d: want 1 to the tx depth (%d)", c.PostList, c.TxDepth)
	case c.CQMod < 1 || c.CQMod > c.TxDepth:
		return fmt.Errorf("completion moderation %d: want 1 to the tx depth (%d)", c.CQMod, c.TxDepth)
	case c.Warmup < 0:
		return fmt.Errorf("warm-up %d is negative", c.Warmup)
	case !c.Test.BW && c.Warmup > 0:
		return fmt.Errorf("warm-up is for bandwidth tests: %v reports medians", c.Test)
	case c.Inline < -1:
		return fmt.Errorf("inline %d: want -1 (device maximum), 0 (never) or a size", c.Inline)
	case c.Event && c.Test == Test{Op: Write}:
		return fmt.Errorf("write_lat waits on memory, not on completions: it has no event mode")
	}
	for _, s := range c.Sizes {
		switch {
		case c.Test.Op == Atomic && s != atomicSize:
			// Run as 8 bytes, the row would claim the size asked for.
			return fmt.Errorf("size %d: %v moves %d bytes, the size of an atomic operand (leave -s out or give -s %d)",
				s, c.Test, atomicSize, atomicSize)
		case s < 1 || s > MaxSize:
			return fmt.Errorf("size %d: want 1 to %d", s, MaxSize)
		}
	}
	return nil
}

// maxSize is the largest of the sizes.
func (c Config) maxSize() int {
	m := 0
	for _, s := range c.Sizes {
		m = max(m, s)
	}
	return m
}
