package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/urma-go/sdk/internal/perf"
	"github.com/urma-go/sdk/urma"
)

// PerfOptions configures Perf: the test's settings (the client's; a
// server follows its client's) and where it runs. Zero Size, Iters,
// Duration, TxDepth, RxDepth, PostList and CQMod take the test's
// defaults; Mode "" is RM and Atomic "" cas, urma_perftest's defaults;
// Inline 0 never inlines (the command line's -I default depends on the
// test, see newPerfCmd). On the command line a zero is refused instead
// (see refuseZeros).
type PerfOptions struct {
	Test string
	// Server is the server's host for the client; empty runs the server.
	Server   string
	Device   string
	EID      int
	Port     int
	Size     int
	All      bool
	Iters    int
	Duration time.Duration
	Mode     string
	Event    bool
	Spin     time.Duration
	Inline   int
	Atomic   string
	TxDepth  int
	RxDepth  int
	PostList int
	CQMod    int
	Warmup   int
	// Tuned runs the tuned loops (--tuned); LockFree makes the queues
	// lock-free (-L), which Tuned implies.
	Tuned    bool
	LockFree bool
	Output   string
	// CPU, unless noCPU, is the core that the thread running this side's
	// test is bound to (see pinThread).
	CPU int
	// CPUProfile, when set, is where this side writes a CPU profile of
	// its run (go tool pprof reads it).
	CPUProfile string
}

func newPerfCmd() *cobra.Command {
	var o PerfOptions
	cmd := &cobra.Command{
		Use:   "perf TEST [SERVER]",
		Short: "Measure latency or bandwidth between two processes, perftest style",
		Long: "perf runs one of " + strings.Join(perf.Tests(), ", ") + "\n" +
			"between a server (no SERVER argument) and a client (the server's address).\n" +
			"The server follows the client's settings, --tuned and -L included. Latency\n" +
			"tables give t_min .. 99.999% in microseconds (write_lat and send_lat: half the\n" +
			"round trip); bandwidth tables give BW peak and average in MB/sec (2^20 bytes)\n" +
			"and the message rate. Runs on any provider: -d loopback0 across processes of\n" +
			"one host, -d rxe0...\n\n" +
			perfLoopsHelp + "\n" + perfDiffHelp,
		Example: "  urmactl perf write_lat                           # server\n" +
			"  urmactl perf write_lat --eid 1 127.0.0.1         # client\n" +
			"  urmactl perf send_bw -a -p RC 127.0.0.1 -o json\n" +
			"  urmactl perf atomic_lat -A faa --tuned 127.0.0.1",
		Args:              usageArgs(cobra.RangeArgs(1, 2)),
		ValidArgsFunction: completePerfArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Test = args[0]
			if len(args) == 2 {
				o.Server = args[1]
			}
			if t, err := perf.ParseTest(o.Test); err == nil && !t.BW && !cmd.Flags().Changed("inline") {
				o.Inline = -1 // latency tests inline up to the device's maximum
			}
			if err := refuseZeros(cmd); err != nil {
				return perfFailed(cmd.OutOrStdout(), o, nil, usage(err))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			return perfRun(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		for letter, now := range movedLetters {
			if strings.HasPrefix(err.Error(), "unknown shorthand flag: '"+letter+"'") {
				return usage(fmt.Errorf("%w (perf's letters are urma_perftest's: use %s)", err, now))
			}
		}
		return usage(err)
	})
	// The letters are urma_perftest's (perftest_parameters.c); where
	// one of urma_perftest's means something this command does not have,
	// the option here has no letter rather than a different meaning.
	f := cmd.Flags()
	f.StringVarP(&o.Device, "dev", "d", "loopback0", "device")
	f.IntVar(&o.EID, "eid", 0, "EID index on the device (urma_perftest --eid_idx)")
	f.IntVarP(&o.Port, "port", "P", perf.DefaultPort, "TCP port of the server's out-of-band channel")
	f.IntVarP(&o.Size, "size", "s", 0, "message size in bytes (default 2 for latency, 65536 for bandwidth; atomics 8)")
	f.BoolVarP(&o.All, "all", "a", false, fmt.Sprintf("run every power of two from 2 to %d bytes", perf.MaxSize))
	f.IntVarP(&o.Iters, "iters", "n", 0, "iterations per size (default 10000 for latency, 50000 for bandwidth)")
	f.VarP(secondsOrDuration{&o.Duration}, "duration", "D", "run each size this long instead of -n iterations: whole seconds (5) or a duration (500ms)")
	f.StringVarP(&o.Mode, "mode", "p", "RM", "transport mode: RM, RC or UM (0, 1, 2)")
	f.BoolVarP(&o.Event, "event", "e", false, "sleep on a JFCE for completions instead of busy polling")
	f.DurationVar(&o.Spin, "spin", 0, "with -e, poll this long before sleeping on the JFCE (spin, then park)")
	f.IntVarP(&o.Inline, "inline", "I", 0, "send WRITE/SEND payloads of up to this many bytes inline (-1: the device's maximum, 0: never;\ndefault: the device's maximum for latency tests, 0 for bandwidth tests)")
	f.StringVarP(&o.Atomic, "atomic", "A", "", "operation of the atomic tests: cas or faa (default cas)")
	f.IntVarP(&o.TxDepth, "tx-depth", "T", 0, "requests in flight, the JFS depth (default 1 for latency, 128 for bandwidth)")
	f.IntVarP(&o.RxDepth, "rx-depth", "R", 0, "receives posted for SEND, the JFR depth (default 512)")
	f.IntVarP(&o.PostList, "post-list", "l", 0, "requests per post call (bandwidth tests; default 1)")
	f.IntVar(&o.Warmup, "warmup", -1, fmt.Sprintf("untimed requests before each size of a bandwidth test (-1: %d for bandwidth tests, none for latency)", perf.DefaultWarmup))
	f.IntVarP(&o.CQMod, "cq-mod", "Q", 0, "signal one request in this many (bandwidth tests; default 100, at most the tx depth)")
	f.BoolVarP(&o.LockFree, "lock-free", "L", false, "create the JFS and JFCs lock-free: only the test's loop posts and polls")
	f.BoolVar(&o.Tuned, "tuned", false, "run the tuned loops: prepared requests and receives (jetty.Prepared,\n"+
		"PreparedRecv), the next latency request posted by the poll or memory wait\n"+
		"that releases it (PostAfter, PostWhen), JFC.PollWait, lock-free queues (-L)")
	f.IntVar(&o.CPU, "cpu", noCPU, "bind the thread that runs the test to this core, as ucx_perftest -c (the runtime's other threads stay free; -1: no binding)")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write this side's CPU profile to `file` (for go tool pprof)")
	addOutputFlag(cmd, &o.Output)
	return cmd
}

// perfRun is what the perf command runs once its flags are read (a
// variable for the tests of the flags).
var perfRun = Perf

// movedLetters are letters perf had that urma_perftest gives another
// meaning or none, and the options that took over theirs.
var movedLetters = map[string]string{
	"t": "-T (--tx-depth)",
	"r": "-R (--rx-depth)",
	"w": "--warmup",
	"c": "--cpu",
}

// perfLoopsHelp says what the loops are, by default and with --tuned.
const perfLoopsHelp = `Loops: by default both sides run the loops a user writes from the jetty
package's documentation: Post of a []WR, PostRecv, JFC.Poll (with -e, Rearm and
Wait on the JFCE after --spin), queues of default configuration. write_lat
spins on the last byte of its buffer until the peer's WRITE lands, then WRITEs
back, on both sides; send_lat posts, polls for the receive and reposts it;
read_lat and atomic_lat post and poll for the record. atomic_lat's server spins
reading the target word while the client runs, as ucx_perftest's responder
does in ucp_fadd and ucp_cswap. --tuned turns on prepared requests and
receives, posting the next latency request from the poll or memory wait that
releases it (PostAfter, PostWhen), JFC.PollWait and lock-free queues (-L); the
report says which loops ran ("tuned" in JSON).
`

// perfDiffHelp says where the options differ from urma_perftest's, whose
// letters and defaults they otherwise follow.
const perfDiffHelp = `Options follow urma_perftest's letters and defaults (-p RM, -A cas, -n 10000
or 50000, -T 1 or 128, -R 512, -Q 100, -I 0 for bandwidth tests, -P 21115).
Where they differ:
  SERVER is an argument (urma_perftest -S); -d defaults to loopback0.
  -a takes no order: it runs 2 B to 8 MiB.
  -D takes whole seconds, as urma_perftest's does, or a duration (500ms),
    and combines with -e and -a, which urma_perftest refuses.
  -I defaults to the device's maximum for latency tests (urma_perftest: 220).
  --warmup N has no letter: bandwidth tests run 10000 untimed requests first,
    as ucx_perftest does (urma_perftest's -w switches on a warm-up that is off
    by default); --warmup 0 runs none.
  --cpu has no letter (urma_perftest's -c is jfc_inline).
  -R is the receive depth; urma_perftest's -r, the receive post list, is not
    an option here, nor are its other letters (-b -B -c -C -E -f -F -j -J -K
    -N -O -S -w -y -z).
  -L and --tuned make the JFS and JFCs lock-free, not the JFR.
  Latency rows summarize every iteration (from its start to the next one's);
    urma_perftest drops the two largest of its intervals between posts and
    takes the mean of the middle two as the median of an even count.
  --eid is --eid_idx; --spin, --tuned, --cpuprofile and -o are ours.`

// secondsOrDuration is -D's value: whole seconds, as urma_perftest's -D
// takes, or a Go duration.
type secondsOrDuration struct{ d *time.Duration }

func (s secondsOrDuration) String() string {
	if s.d == nil {
		return "0s"
	}
	return s.d.String()
}

func (s secondsOrDuration) Set(v string) error {
	if n, err := strconv.Atoi(v); err == nil {
		*s.d = time.Duration(n) * time.Second
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want whole seconds (5) or a duration (500ms)")
	}
	*s.d = d
	return nil
}

func (secondsOrDuration) Type() string { return "duration" }

// Perf runs the server or the client of a perf test; the client's table
// (or JSON) goes to out, progress and the server's notes to log. A client
// asked for JSON writes a JSON report when it fails too, with the error
// and the sizes that finished.
func Perf(ctx context.Context, out, log io.Writer, o PerfOptions) error {
	if err := checkOutput(o.Output); err != nil {
		return err
	}
	rep, err := runPerf(ctx, out, log, o)
	if err != nil {
		return perfFailed(out, o, rep, err)
	}
	return nil
}

// perfFailed returns err, the failure of a run with options o. A client
// asked for JSON first writes the report rep (nil when the run failed
// before it started) with the error: a script reading the output gets a
// document either way, and the exit status still says it failed.
func perfFailed(out io.Writer, o PerfOptions, rep *perf.Report, err error) error {
	if o.Output != OutputJSON || o.Server == "" {
		return err
	}
	if rep == nil {
		rep = &perf.Report{Test: o.Test, Device: o.Device, Tuned: o.Tuned, LockFree: o.Tuned || o.LockFree}
	}
	rep.Error = err.Error()
	if werr := writeJSON(out, rep); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// runPerf is Perf after the output format is checked: the client's
// report, if it got as far as one, and the error.
func runPerf(ctx context.Context, out, log io.Writer, o PerfOptions) (*perf.Report, error) {
	cfg, err := perfConfig(o)
	if err != nil {
		return nil, usage(err)
	}
	if o.Port < 1 || o.Port > 65535 {
		return nil, usage(fmt.Errorf("port %d: want 1 to 65535", o.Port))
	}
	if o.CPU != noCPU {
		if err := pinThread(o.CPU); err != nil {
			return nil, err
		}
		// The thread stays bound until the process ends: Perf is its
		// last work, and a thread that was pinned is not given back to
		// the runtime's pool with its binding.
	}
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	side := perf.Side{Device: o.Device, EID: o.EID, Log: log}
	if o.Server == "" {
		side.Addr = net.JoinHostPort("", strconv.Itoa(o.Port))
		return nil, perf.Server(ctx, side)
	}
	side.Addr = net.JoinHostPort(o.Server, strconv.Itoa(o.Port))
	side.Progress = log
	if o.Output == OutputJSON {
		rep, err := perf.Client(ctx, cfg, side, nil)
		if err != nil {
			return rep, err
		}
		return rep, writeJSON(out, rep)
	}
	return perf.Client(ctx, cfg, side, out)
}

// zeroMeansDefault names the perf flags whose zero value, their default,
// stands for the test's own default, what a given value must be, and
// what leaving the flag out does.
var zeroMeansDefault = []struct{ flag, want, without string }{
	{"size", "at least 1 byte", "for the test's default"},
	{"iters", "at least 1 iteration", "for the test's default"},
	{"duration", "a positive duration", "to run a count of iterations"},
	{"tx-depth", "a depth of at least 1", "for the test's default"},
	{"rx-depth", "a depth of at least 1", "for the test's default"},
	{"post-list", "at least 1 request per post", "for the test's default"},
	{"cq-mod", "1 (signal every request) or more", "for the test's default"},
}

// refuseZeros refuses a flag of zeroMeansDefault given as zero: the run
// would not do what the command line says but silently take the test's
// default (-s 0 running 2-byte messages), so the user is told to leave
// the flag out instead.
func refuseZeros(cmd *cobra.Command) error {
	for _, z := range zeroMeansDefault {
		f := cmd.Flags().Lookup(z.flag)
		if f.Changed && f.Value.String() == f.DefValue {
			name := "--" + f.Name
			if f.Shorthand != "" {
				name = "-" + f.Shorthand
			}
			return fmt.Errorf("%s %s: want %s (leave %s out %s)", name, f.Value, z.want, name, z.without)
		}
	}
	return nil
}

// perfConfig turns the flags into a perf.Config.
func perfConfig(o PerfOptions) (perf.Config, error) {
	t, err := perf.ParseTest(o.Test)
	if err != nil {
		return perf.Config{}, err
	}
	cfg := perf.Config{Test: t, Iters: o.Iters, Duration: o.Duration, Event: o.Event, Spin: o.Spin, Inline: o.Inline,
		TxDepth: o.TxDepth, RxDepth: o.RxDepth, PostList: o.PostList, CQMod: o.CQMod, Warmup: o.Warmup,
		Tuned: o.Tuned, LockFree: o.LockFree}
	if o.Warmup == -1 {
		cfg.Warmup = 0
		if t.BW {
			cfg.Warmup = perf.DefaultWarmup
		}
	}
	switch strings.ToUpper(o.Mode) {
	case "RM", "0", "":
		cfg.Mode = urma.RM
	case "RC", "1":
		cfg.Mode = urma.RC
	case "UM", "2":
		cfg.Mode = urma.UM
	default:
		return cfg, fmt.Errorf("mode %q: want RM, RC or UM", o.Mode)
	}
	switch strings.ToLower(o.Atomic) {
	case "cas", "":
		cfg.CAS = true
	case "faa":
	default:
		return cfg, fmt.Errorf("atomic %q: want cas or faa", o.Atomic)
	}
	switch {
	case o.Atomic != "" && t.Op != perf.Atomic:
		return cfg, fmt.Errorf("-A %s chooses the operation of the atomic tests; %v has none", o.Atomic, t)
	case o.Iters != 0 && o.Duration != 0:
		// A timed run takes as many iterations as fit.
		return cfg, fmt.Errorf("-n and -D exclude each other: -n runs a count of iterations, -D as many as fit in a time")
	case o.All && o.Size != 0:
		return cfg, fmt.Errorf("-a and -s exclude each other")
	case o.All && t.Op == perf.Atomic:
		return cfg, fmt.Errorf("-a runs every size from 2 to %d bytes; %v moves 8 bytes only (leave -a out)", perf.MaxSize, t)
	case o.All:
		cfg.Sizes = perf.AllSizes(perf.MaxSize)
	case o.Size != 0:
		cfg.Sizes = []int{o.Size}
	}
	if o.Iters < 0 || o.TxDepth < 0 || o.RxDepth < 0 || o.PostList < 0 || o.CQMod < 0 {
		return cfg, fmt.Errorf("iterations, depths, post list and moderation must not be negative")
	}
	cfg = cfg.Defaults()
	return cfg, cfg.Validate()
}
