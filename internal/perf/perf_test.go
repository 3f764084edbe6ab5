package perf

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
)

// freeAddr returns a TCP address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// pair runs a server and a client of cfg in this process on loopback0
// (EIDs 0 and 1) and returns the client's report and table.
func pair(t *testing.T, cfg Config) (*Report, string, error) {
	t.Helper()
	return pairOn(t, "loopback0", 0, 1, cfg)
}

// pairOn is pair on device dev, the server on EID srv and the client on
// EID cli.
func pairOn(t *testing.T, dev string, srv, cli int, cfg Config) (*Report, string, error) {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srvErr := make(chan error, 1)
	go func() { srvErr <- Server(ctx, Side{Device: dev, EID: srv, Addr: addr}) }()
	var table bytes.Buffer
	rep, err := Client(ctx, cfg, Side{Device: dev, EID: cli, Addr: addr}, &table)
	if err != nil {
		cancel()
	}
	serr := <-srvErr
	if err == nil {
		err = serr
	}
	return rep, table.String(), err
}

// testMode is one test in one transport mode, named "test/mode".
type testMode struct {
	name string
	test Test
	mode urma.TransportMode
}

// testModes is every test in every mode that can run it: UM carries only
// SEND.
func testModes(t *testing.T) []testMode {
	var tms []testMode
	for _, name := range Tests() {
		test, err := ParseTest(name)
		require.NoError(t, err)
		for _, mode := range []urma.TransportMode{urma.RC, urma.RM, urma.UM} {
			if mode == urma.UM && test.Op != Send {
				continue
			}
			tms = append(tms, testMode{name + "/" + mode.String(), test, mode})
		}
	}
	return tms
}

func TestEveryTest(t *testing.T) {
	for _, tm := range testModes(t) {
		test, mode := tm.test, tm.mode
		t.Run(tm.name, func(t *testing.T) {
			cfg := Config{Test: test, Mode: mode, Iters: 300, Sizes: []int{64, 4096}}
			if test.Op == Atomic {
				cfg.Sizes = nil
			}
			if test.BW {
				cfg.Warmup = 500 // untimed: the rows count 300
			}
			rep, table, err := pair(t, cfg)
			require.NoError(t, err, table)
			want := []int{64, 4096}
			if test.Op == Atomic {
				want = []int{8}
			}
			if test.BW {
				require.Len(t, rep.BW, len(want), table)
				for i, r := range rep.BW {
					assert.Equal(t, want[i], r.Bytes)
					assert.Equal(t, 300, r.Iters)
					assert.Greater(t, r.AvgMBs, 0.0)
					assert.GreaterOrEqual(t, r.PeakMBs, r.AvgMBs*0.999)
					assert.InDelta(t, r.AvgMBs*(1<<20)/float64(r.Bytes)/1e6, r.MsgRateMpps, 1e-9)
				}
				return
			}
			require.Len(t, rep.Latency, len(want), table)
			for i, r := range rep.Latency {
				assert.Equal(t, want[i], r.Bytes)
				assert.Equal(t, 300, r.Iters)
				assert.Greater(t, r.Min, 0.0)
				assert.True(t, r.Min <= r.Median && r.Median <= r.P99 && r.P99 <= r.P999 && r.P99999 <= r.Max, "%+v", r)
			}
			assert.Contains(t, table, "t_median[us]")
		})
	}
}

// TestInlineRoundTrips: the latency loops send their marker inline at
// sizes up to the inline limit, and each post sends what the buffer holds
// then (a loop that sent a stale copy would wait for its answer forever).
func TestInlineRoundTrips(t *testing.T) {
	for _, name := range []string{"write_lat", "send_lat"} {
		for _, mode := range []urma.TransportMode{urma.RC, urma.RM} {
			test, err := ParseTest(name)
			require.NoError(t, err)
			rep, table, err := pair(t, Config{Test: test, Mode: mode, Iters: 300, Sizes: []int{8}, Inline: -1})
			require.NoError(t, err, table)
			require.Regexp(t, `inline [1-9][0-9]+ `, table, "the device's limit, which 8 bytes are within")
			require.Len(t, rep.Latency, 1, table)
			assert.Equal(t, 300, rep.Latency[0].Iters)
		}
	}
}

// TestNoAllocationsPerOperation: the timed loops of both sides, default
// and tuned, and the provider under them, allocate nothing per request.
// The count covers the whole process during the loop, so a few
// allocations of the runtime and the out-of-band goroutines are allowed,
// not one per request. The second of two equal sizes is judged: the first
// fills the provider's pools (a loopback sender waiting on receives keeps
// up to its depth of request copies).
func TestNoAllocationsPerOperation(t *testing.T) {
	for _, name := range []string{"write_lat", "send_lat", "read_lat", "atomic_lat", "write_bw", "send_bw", "read_bw"} {
		for _, mode := range []urma.TransportMode{urma.RC, urma.RM} {
			for _, tuned := range []bool{false, true} {
				test, err := ParseTest(name)
				require.NoError(t, err)
				size := 64
				if test.Op == Atomic {
					size = atomicSize
				}
				// RM runs in event mode: a sleep on the JFCE allocates
				// nothing either.
				rep, table, err := pair(t, Config{Test: test, Mode: mode, Iters: 3000, Sizes: []int{size, size},
					Event: mode == urma.RM && test != Test{Op: Write}, Tuned: tuned})
				require.NoError(t, err, table)
				allocs := 0.0
				if test.BW {
					allocs = rep.BW[len(rep.BW)-1].AllocsPerOp
				} else {
					allocs = rep.Latency[len(rep.Latency)-1].AllocsPerOp // atomics run one size
				}
				assert.Less(t, allocs, 0.02, "%s %v %s loops: %s", name, mode, loops(tuned), table)
			}
		}
	}
}

func TestConfig(t *testing.T) {
	assert.Equal(t, []string{"read_lat", "read_bw", "write_lat", "write_bw", "send_lat", "send_bw", "atomic_lat", "atomic_bw"}, Tests())
	_, err := ParseTest("write")
	assert.ErrorContains(t, err, `unknown test "write"`)

	c := Config{Test: Test{Op: Write}}.Defaults()
	assert.Equal(t, []int{2}, c.Sizes)
	assert.Equal(t, []any{10000, 1, 512, 1, 1, urma.RM}, []any{c.Iters, c.TxDepth, c.RxDepth, c.PostList, c.CQMod, c.Mode})
	c = Config{Test: Test{Op: Send, BW: true}, TxDepth: 16}.Defaults()
	assert.Equal(t, []any{[]int{65536}, 50000, 16}, []any{c.Sizes, c.Iters, c.CQMod})
	c = Config{Test: Test{Op: Atomic, BW: true}}.Defaults()
	assert.Equal(t, []int{8}, c.Sizes)
	assert.NoError(t, c.Validate())
	c = Config{Test: Test{Op: Atomic}, Sizes: []int{8}}.Defaults()
	assert.Equal(t, []int{8}, c.Sizes)
	assert.NoError(t, c.Validate())
	assert.Equal(t, []int{2, 4, 8, 16}, AllSizes(16))

	for cfg, want := range map[*Config]string{
		{Test: Test{Op: Write}, Mode: urma.UM}:                    "UM carries only SEND",
		{Test: Test{Op: Write}, Event: true}:                      "no event mode",
		{Test: Test{Op: Send}, PostList: 4}:                       "for bandwidth tests",
		{Test: Test{Op: Send, BW: true}, TxDepth: 8, PostList: 9}: "post list 9",
		{Test: Test{Op: Send, BW: true}, TxDepth: 8, CQMod: 9}:    "completion moderation 9",
		{Test: Test{Op: Read}, Sizes: []int{MaxSize + 1}}:         "size 8388609",
		{Test: Test{Op: Atomic}, Sizes: []int{64}}:                "size 64: atomic_lat moves 8 bytes",
		{Test: Test{Op: Atomic, BW: true}, Sizes: []int{8, 16}}:   "size 16: atomic_bw moves 8 bytes",
		{Test: Test{Op: Read}, Iters: -1}:                         "iterations -1",
		{Test: Test{Op: Read}, Inline: -2}:                        "inline -2",
		{Test: Test{Op: Send}, Event: true, Spin: -1}:             "spin -1ns is negative",
		{Test: Test{Op: Send}, Spin: time.Microsecond}:            "add -e",
		{Test: Test{Op: Write}, Warmup: 10}:                       "warm-up is for bandwidth tests",
		{Test: Test{Op: Write, BW: true}, Warmup: -1}:             "warm-up -1 is negative",
	} {
		assert.ErrorContains(t, cfg.Defaults().Validate(), want, "%+v", *cfg)
	}
}

func TestLatResult(t *testing.T) {
	samples := make([]int64, 1000)
	for i := range samples {
		samples[i] = int64(1000 * (1000 - i)) // 1..1000 us, reversed
	}
	r := latResult(64, samples, false)
	assert.Equal(t, LatResult{Bytes: 64, Iters: 1000, Min: 1, Max: 1000, Median: 501, Avg: 500.5, Stdev: r.Stdev,
		P99: 990, P999: 999, P9999: 1000, P99999: 1000}, r)
	assert.InDelta(t, 288.67, r.Stdev, 0.01)
	h := latResult(64, []int64{4000, 2000}, true)
	assert.Equal(t, []float64{1, 2, 2}, []float64{h.Min, h.Max, h.Median})
}

// TestServerErrors: what the server refuses reaches the client as an
// error, and a cancelled client returns at once.
func TestServerErrors(t *testing.T) {
	_, _, err := pair(t, Config{Test: Test{Op: Write}, Sizes: []int{64}, Inline: 1 << 20})
	assert.ErrorContains(t, err, "inline 1048576")

	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	srv := make(chan error, 1)
	go func() { srv <- Server(ctx, Side{Device: "loopback0", Addr: addr}) }()
	cli := make(chan error, 1)
	go func() {
		_, err := Client(ctx, Config{Test: Test{Op: Write}, Duration: time.Hour}, Side{Device: "loopback0", EID: 1, Addr: addr}, nil)
		cli <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-cli:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the client ran on 10s after its context ended")
	}
	assert.ErrorIs(t, <-srv, context.Canceled)
}

// TestEventMode: with -e both sides sleep on their JFCE between records
// and the tests still complete, on every transport.
func TestEventMode(t *testing.T) {
	for _, c := range []Config{
		{Test: Test{Op: Send}, Event: true, Iters: 300},
		{Test: Test{Op: Send}, Event: true, Spin: 20 * time.Microsecond, Iters: 300},
		{Test: Test{Op: Read}, Event: true, Iters: 300, Mode: urma.RM},
		{Test: Test{Op: Send, BW: true}, Event: true, Iters: 3000, Mode: urma.UM, Sizes: []int{512}},
		{Test: Test{Op: Atomic, BW: true}, Event: true, Iters: 3000, CAS: true},
	} {
		t.Run(fmt.Sprintf("%v/spin=%v", c.Test, c.Spin), func(t *testing.T) {
			rep, table, err := pair(t, c)
			require.NoError(t, err, table)
			assert.True(t, rep.Event)
			assert.Equal(t, c.Spin, rep.Spin)
			assert.Contains(t, table, " event ")
			if c.Test.BW {
				assert.Equal(t, c.Iters, rep.BW[0].Iters)
			} else {
				assert.Equal(t, c.Iters, rep.Latency[0].Iters)
			}
		})
	}
}

func TestProgressLine(t *testing.T) {
	b := make([]byte, 0, 128)
	assert.Equal(t, "write_lat 8 B: 500/1000 iterations, 2500/s\n", string(progressLine(b, "write_lat 8 B", 500, 1000, 2499.6)))
	assert.Equal(t, "send_bw: 7 iterations, 3/s\n", string(progressLine(b, "send_bw", 7, 0, 3.2)))
	// A run's allocation count is the whole process's, progress included.
	allocs := testing.AllocsPerRun(100, func() { b = progressLine(b[:0], "read_bw 65536 B", 123456, 1000000, 98765.4) })
	assert.Zero(t, allocs)
}

func TestStopwatchCountsNanoseconds(t *testing.T) {
	clock := startStopwatch()
	start, wall := clock.now(), time.Now()
	time.Sleep(20 * time.Millisecond)
	ticks, elapsed := clock.now()-start, time.Since(wall)
	got := time.Duration(float64(ticks) * clock.nanos())
	// Both readings bracket the same sleep; they differ by the few
	// microseconds between the two clock reads at either end.
	if d := got - elapsed; d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("stopwatch measured %v of a sleep that took %v (tsc %v)", got, elapsed, clock.tsc)
	}
}
