package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
	"github.com/urma-go/sdk/examples/internal/exutil"
)

var header = regexp.MustCompile(`(?m)^events: (\S+), RM, (\d+) round trips of (\d+) bytes
cpu: user\+sys of this process, (both sides|client side|server side)
mode +p50_us +p99_us +p99\.9_us +min_us +avg_us +wall_ms +cpu_ms +cpu_per_rt_us +cpu_util
`)

var (
	rowLine     = regexp.MustCompile(`(?m)^(poll|event) .*$`)
	compareLine = regexp.MustCompile(`(?m)^event/poll:( p50 x[0-9.e+-]+, p99 x[0-9.e+-]+,)? cpu_per_rt x[0-9.e+-]+$`)
)

// table is a parsed output: the header's fields and each mode's numbers,
// NaN where the server prints "-".
type table struct {
	dev, count, size, cpu string
	rows                  map[string][]float64
	modes                 []string
}

func parse(t *testing.T, out string) table {
	t.Helper()
	m := header.FindStringSubmatch(out)
	require.NotNil(t, m, "no header in:\n%s", out)
	tb := table{dev: m[1], count: m[2], size: m[3], cpu: m[4], rows: map[string][]float64{}}
	for _, line := range rowLine.FindAllString(out, -1) {
		f := strings.Fields(line)
		require.Len(t, f, len(columns), "row %q", line)
		var nums []float64
		for _, s := range f[1:] {
			v, err := strconv.ParseFloat(s, 64) // "-" parses as an error
			if s == "-" {
				v, err = -1, nil
			}
			require.NoError(t, err, "row %q", line)
			nums = append(nums, v)
		}
		tb.rows[f[0]] = nums
		tb.modes = append(tb.modes, f[0])
	}
	return tb
}

// checkRows checks what holds whatever the machine: the columns present,
// latencies positive and ordered, CPU and wall time measured.
func checkRows(t *testing.T, tb table, latencies bool) {
	t.Helper()
	for mode, r := range tb.rows {
		p50, p99, p999, lo, avg, wall, cpu, perRT, util := r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]
		if latencies {
			assert.Positive(t, lo, mode)
			assert.LessOrEqual(t, lo, p50, mode)
			assert.LessOrEqual(t, p50, p99, mode)
			assert.LessOrEqual(t, p99, p999, mode)
			assert.LessOrEqual(t, lo, avg, mode)
		} else {
			assert.Equal(t, []float64{-1, -1, -1, -1, -1}, r[:5], mode)
		}
		assert.Positive(t, wall, mode)
		assert.GreaterOrEqual(t, cpu, 0.0, mode)
		assert.GreaterOrEqual(t, perRT, 0.0, mode)
		assert.GreaterOrEqual(t, util, 0.0, mode)
	}
}

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		modes []string
	}{
		{"poll", []string{"poll"}},
		{"event", []string{"event"}},
		{"both", []string{"poll", "event"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			cfg := testConfig(t, "-mode", tc.mode, "-count", "200", "-size", "32")
			var b bytes.Buffer
			require.NoError(t, run(context.Background(), cfg, &b))
			out := b.String()
			tb := parse(t, out)
			assert.Equal(t, "loopback/loopback0", tb.dev)
			assert.Equal(t, "200", tb.count)
			assert.Equal(t, "32", tb.size)
			assert.Equal(t, "both sides", tb.cpu)
			assert.Equal(t, tc.modes, tb.modes)
			checkRows(t, tb, true)
			assert.Equal(t, len(tc.modes) == 2, compareLine.MatchString(out), "comparison line in:\n%s", out)
			assert.Equal(t, 2+1+len(tc.modes)+len(tc.modes)/2, strings.Count(out, "\n"), "lines of:\n%s", out)
		})
	}
}

func TestRunInterval(t *testing.T) {
	cfg := testConfig(t, "-count", "20", "-size", "8", "-interval", "200us")
	var b bytes.Buffer
	require.NoError(t, run(context.Background(), cfg, &b))
	tb := parse(t, b.String())
	checkRows(t, tb, true)
	for _, mode := range []string{"poll", "event"} {
		// The wall time (ms) holds the 19 pauses between 20 round trips.
		assert.GreaterOrEqual(t, tb.rows[mode][5], 3.8, mode)
	}
}

// TestRunCancel stops a long run from outside, as Ctrl-C does.
func TestRunCancel(t *testing.T) {
	for _, mode := range []string{"poll", "event"} {
		t.Run(mode, func(t *testing.T) {
			cfg := testConfig(t, "-mode", mode, "-count", "100000000")
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := run(ctx, cfg, io.Discard)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
}

func TestRunErrors(t *testing.T) {
	var b bytes.Buffer
	err := run(context.Background(), testConfig(t, "-dev", "nope"), &b)
	assert.ErrorContains(t, err, `no device named "nope"`)
	err = run(context.Background(), testConfig(t, "-provider", "nope"), &b)
	assert.ErrorContains(t, err, "forgotten import?")
	assert.Empty(t, b.String())
}

func TestFlags(t *testing.T) {
	cfg := testConfig(t)
	assert.Equal(t, []string{"poll", "event"}, cfg.modes)
	assert.Equal(t, 10000, cfg.count)
	assert.Equal(t, 64, cfg.size)
	assert.Equal(t, defaultAddr, cfg.Addr)
	assert.True(t, cfg.OneProcess())
	assert.Equal(t, []string{"event"}, testConfig(t, "-client", "-mode", "event").modes)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-mode", "nope"}, `-mode "nope": want poll, event or both`},
		{[]string{"-server", "-client"}, "exclude each other"},
		{[]string{"-server", "-client", "-mode", "poll"}, "exclude each other"},
		{[]string{"-server", "-count", "5"}, "belong to the client"},
		{[]string{"-server", "-interval", "1ms"}, "belong to the client"},
		{[]string{"-count", "0"}, "-count 0"},
		{[]string{"-count", "-3"}, "-count -3"},
		{[]string{"-size", "0"}, "-size 0"},
		{[]string{"-size", "1048577"}, "-size 1048577"},
		{[]string{"-interval", "-1ms"}, "-interval -1ms"},
		{[]string{"-interval", "2s"}, "-interval 2s"},
		{[]string{"x"}, `unexpected argument "x"`},
	} {
		cfg, err := parseFlags(tc.args, io.Discard)
		require.NoError(t, err, tc.args)
		assert.ErrorContains(t, cfg.validate(), tc.want, tc.args)
	}
	_, err := parseFlags([]string{"-count", "many"}, io.Discard)
	assert.Error(t, err)
}

func TestHello(t *testing.T) {
	h := hello{modes: []string{"poll", "event"}, count: 12345, size: 4096}
	got, err := parseHello(h.marshal())
	require.NoError(t, err)
	assert.Equal(t, h, got)
	got, err = parseHello(hello{modes: []string{"event"}, count: 1, size: 1}.marshal())
	require.NoError(t, err)
	assert.Equal(t, []string{"event"}, got.modes)

	bad := func(mutate func(b []byte) []byte) []byte { return mutate(h.marshal()) }
	for name, b := range map[string][]byte{
		"empty":      nil,
		"short":      bad(func(b []byte) []byte { return b[:10] }),
		"long":       bad(func(b []byte) []byte { return append(b, 0) }),
		"magic":      bad(func(b []byte) []byte { b[0] = 'X'; return b }),
		"no mode":    bad(func(b []byte) []byte { b[4] = 0; return b }),
		"odd mode":   bad(func(b []byte) []byte { b[4] = 7; return b }),
		"zero count": hello{modes: []string{"poll"}, count: 0, size: 1}.marshal(),
		"huge count": bad(func(b []byte) []byte { b[5] = 0xff; return b }),
		"zero size":  hello{modes: []string{"poll"}, count: 1, size: 0}.marshal(),
		"huge size":  hello{modes: []string{"poll"}, count: 1, size: maxSize + 1}.marshal(),
	} {
		_, err := parseHello(b)
		assert.Error(t, err, name)
	}
}

func TestReason(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, writeReason(&b, ""))
	require.NoError(t, writeReason(&b, strings.Repeat("x", 70000)))
	got, err := readReason(&b)
	require.NoError(t, err)
	assert.Empty(t, got, "accepted")
	got, err = readReason(&b)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("x", math.MaxUint16), got, "a long reason is cut to what its length can say")
	_, err = readReason(bytes.NewReader([]byte{0, 9, 'x'}))
	assert.Error(t, err, "cut short")
}

func TestPercentile(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 1000; i++ {
		s = append(s, time.Duration(1001-i)*time.Microsecond)
	}
	l := summarize(s)
	assert.Equal(t, latency{p50: 500 * time.Microsecond, p99: 990 * time.Microsecond,
		p999: 999 * time.Microsecond, min: time.Microsecond, avg: 500500 * time.Nanosecond}, l)
	one := summarize([]time.Duration{7})
	assert.Equal(t, latency{p50: 7, p99: 7, p999: 7, min: 7, avg: 7}, one)
}

func testConfig(t *testing.T, args ...string) config {
	t.Helper()
	cfg, err := parseFlags(args, io.Discard)
	require.NoError(t, err)
	require.NoError(t, cfg.validate())
	return cfg
}

var listening = regexp.MustCompile(`events: listening on (\S+)`)

// TestServerClient runs the two sides as processes, as two terminals
// would.
func TestServerClient(t *testing.T) {
	bin := extest.Build(t)
	addr := extest.FreeAddr(t)
	srv := extest.Start(t, "server", bin, "-server", "-addr", addr)
	srv.Await(listening, 10*time.Second)
	cli := extest.Start(t, "client", bin, "-client", "-addr", addr, "-count", "200", "-size", "100")
	out, err := cli.Wait(30 * time.Second)
	require.NoError(t, err, out)
	tb := parse(t, out)
	assert.Equal(t, []string{"200", "100", "client side"}, []string{tb.count, tb.size, tb.cpu})
	assert.Equal(t, []string{"poll", "event"}, tb.modes)
	checkRows(t, tb, true)
	assert.Regexp(t, compareLine, out)

	out, err = srv.Wait(10 * time.Second)
	require.NoError(t, err, out)
	tb = parse(t, out)
	assert.Equal(t, []string{"200", "100", "server side"}, []string{tb.count, tb.size, tb.cpu})
	assert.Equal(t, []string{"poll", "event"}, tb.modes)
	checkRows(t, tb, false)
}

// TestModeMismatch: a server told one mode refuses a client that wants
// another, and both say why.
func TestModeMismatch(t *testing.T) {
	bin := extest.Build(t)
	addr := extest.FreeAddr(t)
	srv := extest.Start(t, "server", bin, "-server", "-addr", addr, "-mode", "poll")
	srv.Await(listening, 10*time.Second)
	cli := extest.Start(t, "client", bin, "-client", "-addr", addr, "-mode", "event", "-count", "10")
	out, err := cli.Wait(10 * time.Second)
	assert.Equal(t, 1, extest.ExitCode(t, err), out)
	assert.Contains(t, out, "events: the server refused: the client asks for event mode, the server runs -mode poll")
	out, err = srv.Wait(10 * time.Second)
	assert.Equal(t, 1, extest.ExitCode(t, err), out)
	assert.Contains(t, out, "events: refused the client:")
}

func TestInterrupt(t *testing.T) {
	bin := extest.Build(t)
	t.Run("waiting server", func(t *testing.T) {
		srv := extest.Start(t, "server", bin, "-server", "-addr", extest.FreeAddr(t))
		srv.Await(listening, 10*time.Second)
		require.NoError(t, srv.Interrupt())
		out, err := srv.Wait(5 * time.Second)
		assert.Equal(t, exutil.ExitInterrupted, extest.ExitCode(t, err), out)
		assert.Contains(t, out, "events: interrupted\n")
	})
	for _, mode := range []string{"event", "poll"} {
		t.Run("running "+mode, func(t *testing.T) {
			p := extest.Start(t, mode, bin, "-mode", mode, "-count", "100000000")
			p.Await(regexp.MustCompile(`(?m)^mode .*\n`), 10*time.Second)
			time.Sleep(200 * time.Millisecond) // into the ping-pong
			require.NoError(t, p.Interrupt())
			out, err := p.Wait(5 * time.Second)
			assert.Equal(t, exutil.ExitInterrupted, extest.ExitCode(t, err), out)
			assert.Contains(t, out, "events: interrupted\n")
			assert.NotRegexp(t, rowLine, out)
		})
	}
}

func TestBadFlags(t *testing.T) {
	bin := extest.Build(t)
	for _, args := range [][]string{
		{"-mode", "nope"},
		{"-server", "-client"},
		{"-count", "x"},
		{"-nope"},
	} {
		out, err := extest.Start(t, "events", bin, args...).Wait(10 * time.Second)
		assert.Equal(t, 2, extest.ExitCode(t, err), "%v: %s", args, out)
		assert.NotEmpty(t, out, args)
		assert.NotContains(t, out, "panic", args)
	}
}
