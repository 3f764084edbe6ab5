package cli

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/internal/perf"
	"github.com/urma-go/sdk/urma"
)

// parsePerf runs the perf command line args (after "perf") up to the run
// and returns the options it read and the config they make.
func parsePerf(t *testing.T, args string) (PerfOptions, perf.Config, error) {
	t.Helper()
	var got PerfOptions
	ran := false
	old := perfRun
	perfRun = func(_ context.Context, _, _ io.Writer, o PerfOptions) error {
		got, ran = o, true
		return nil
	}
	defer func() { perfRun = old }()
	cmd := newPerfCmd()
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(strings.Fields(args))
	if err := cmd.Execute(); err != nil {
		return got, perf.Config{}, err
	}
	require.True(t, ran, args)
	cfg, err := perfConfig(got)
	return got, cfg, err
}

// The letters and defaults are urma_perftest's: -T and -R the depths, -P
// the port, -L lock-free queues, -p RM and -A cas by default, 10000 and
// 50000 iterations, cq_mod 100 capped at the depth, inline 0 for
// bandwidth tests. The long names are unchanged.
func TestPerfLetters(t *testing.T) {
	for args, check := range map[string]func(t *testing.T, o PerfOptions, c perf.Config){
		"write_bw -T 16":         func(t *testing.T, _ PerfOptions, c perf.Config) { assert.Equal(t, 16, c.TxDepth) },
		"write_bw --tx-depth 16": func(t *testing.T, _ PerfOptions, c perf.Config) { assert.Equal(t, 16, c.TxDepth) },
		"send_bw -R 64":          func(t *testing.T, _ PerfOptions, c perf.Config) { assert.Equal(t, 64, c.RxDepth) },
		"send_bw --rx-depth 64":  func(t *testing.T, _ PerfOptions, c perf.Config) { assert.Equal(t, 64, c.RxDepth) },
		"send_lat -P 7001":       func(t *testing.T, o PerfOptions, _ perf.Config) { assert.Equal(t, 7001, o.Port) },
		"send_lat --port 7001":   func(t *testing.T, o PerfOptions, _ perf.Config) { assert.Equal(t, 7001, o.Port) },
		"send_lat -L": func(t *testing.T, _ PerfOptions, c perf.Config) {
			assert.True(t, c.LockFree)
			assert.False(t, c.Tuned)
		},
		"send_lat --lock-free": func(t *testing.T, _ PerfOptions, c perf.Config) { assert.True(t, c.LockFree) },
		"send_lat --tuned":     func(t *testing.T, _ PerfOptions, c perf.Config) { assert.True(t, c.Tuned) },
		"send_lat": func(t *testing.T, o PerfOptions, c perf.Config) {
			assert.False(t, c.Tuned)
			assert.False(t, c.LockFree)
			assert.Equal(t, urma.RM, c.Mode)
			assert.Equal(t, 10000, c.Iters)
			assert.Equal(t, []any{1, 512, 1, 1}, []any{c.TxDepth, c.RxDepth, c.PostList, c.CQMod})
			assert.Equal(t, -1, c.Inline, "latency tests inline up to the device's maximum")
			assert.Equal(t, perf.DefaultPort, o.Port)
		},
		"write_bw": func(t *testing.T, _ PerfOptions, c perf.Config) {
			assert.Equal(t, urma.RM, c.Mode)
			assert.Equal(t, 50000, c.Iters)
			assert.Equal(t, []any{128, 100, 0, perf.DefaultWarmup}, []any{c.TxDepth, c.CQMod, c.Inline, c.Warmup})
		},
		"write_bw -T 16 --warmup 0": func(t *testing.T, _ PerfOptions, c perf.Config) {
			assert.Equal(t, 16, c.CQMod, "cq_mod is capped at the depth")
			assert.Zero(t, c.Warmup)
		},
		"write_bw -I 32":       func(t *testing.T, _ PerfOptions, c perf.Config) { assert.Equal(t, 32, c.Inline) },
		"write_lat --inline 0": func(t *testing.T, _ PerfOptions, c perf.Config) { assert.Zero(t, c.Inline) },
		"atomic_lat":           func(t *testing.T, _ PerfOptions, c perf.Config) { assert.True(t, c.CAS) },
		"atomic_lat -A faa":    func(t *testing.T, _ PerfOptions, c perf.Config) { assert.False(t, c.CAS) },
		"write_lat -p 1":       func(t *testing.T, _ PerfOptions, c perf.Config) { assert.Equal(t, urma.RC, c.Mode) },
		"write_lat -p 0":       func(t *testing.T, _ PerfOptions, c perf.Config) { assert.Equal(t, urma.RM, c.Mode) },
		"send_bw -D 2":         func(t *testing.T, _ PerfOptions, c perf.Config) { assert.Equal(t, 2*time.Second, c.Duration) },
		"send_bw -D 500ms": func(t *testing.T, _ PerfOptions, c perf.Config) {
			assert.Equal(t, 500*time.Millisecond, c.Duration)
		},
		"send_bw --duration 3s": func(t *testing.T, _ PerfOptions, c perf.Config) { assert.Equal(t, 3*time.Second, c.Duration) },
		"send_lat --cpu 0":      func(t *testing.T, o PerfOptions, _ perf.Config) { assert.Equal(t, 0, o.CPU) },
	} {
		t.Run(args, func(t *testing.T) {
			o, c, err := parsePerf(t, args)
			require.NoError(t, err)
			check(t, o, c)
		})
	}
}

// Letters perf had that urma_perftest gives another meaning (or none) are
// refused, naming the option that took over, rather than read as
// something else; -D refuses what is neither seconds nor a duration.
func TestPerfOldLetters(t *testing.T) {
	for args, want := range map[string]string{
		"write_bw -t 16":       "unknown shorthand flag: 't' in -t (perf's letters are urma_perftest's: use -T (--tx-depth))",
		"send_bw -r 64":        "use -R (--rx-depth)",
		"write_bw -w 0":        "use --warmup",
		"send_lat -c 0":        "use --cpu",
		"send_bw -D 2x":        "want whole seconds (5) or a duration (500ms)",
		"send_lat --lock_free": "unknown flag: --lock_free",
	} {
		_, _, err := parsePerf(t, args)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), want, args)
	}
}
