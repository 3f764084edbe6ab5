package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/urma-go/sdk/urma"
)

// PingOptions configures Ping. The zero value is not usable: Target is
// required, and Interval and Timeout must be positive (the command line's
// defaults are DefaultPingInterval and DefaultPingTimeout).
type PingOptions struct {
	// Target is the peer: an EID, or EID/UASID for one context.
	Target string
	Device string
	EID    int // EID index of Device to ping from
	// Count stops after this many requests; 0 runs until Deadline or an
	// interrupt.
	Count    int
	Interval time.Duration
	// Timeout is how long each request waits for its reply.
	Timeout time.Duration
	// Deadline, unless 0, ends the run this long after it starts.
	Deadline time.Duration
	Size     int
	Quiet    bool
	// Listen answers pings to the EID instead of sending any (ListenPing),
	// until ctx ends.
	Listen bool
}

// Defaults of ping's flags.
const (
	DefaultPingInterval = time.Second
	DefaultPingTimeout  = 2 * time.Second
	DefaultPingSize     = 16
)

// ExitInterrupted is urmactl's status when Ctrl-C (or SIGTERM) ended a
// command that reports what it did so far (128 + SIGINT, as shells report
// it).
const ExitInterrupted = 130

// An ExitError ends urmactl with status Code. Its message, when not
// empty, is printed as any error's is.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

func newPingCmd() *cobra.Command {
	o := PingOptions{Interval: DefaultPingInterval, Timeout: DefaultPingTimeout, Size: DefaultPingSize}
	cmd := &cobra.Command{
		Use:   "ping [flags] EID[/UASID]",
		Short: "Check that a peer URMA context answers, and time the round trip",
		Long: "ping sends requests to the context at EID (or to the one context EID/UASID\n" +
			"names) and prints a line per reply with its round trip, then ping's\n" +
			"statistics. The peer's provider answers, not its application:\n" +
			"  loopback0  every loopback context of this host answers on its control\n" +
			"             socket; EID alone pings another context at that EID (any one).\n" +
			"  ib devices a context answers pings that name its UASID (its rdma_cm\n" +
			"             port) from its rdma_cm listener; EID alone needs\n" +
			"             'urmactl ping -l -d DEV' running on the peer host, which answers\n" +
			"             on the provider's ping port. The time includes the address\n" +
			"             and route resolution of an rdma_cm connection request.\n\n" +
			"Exit status, as iputils ping's: 0 when at least one reply came (with -c\n" +
			"and -w both, when all -c did), 1 otherwise or on an error, 2 for a usage\n" +
			"error, 130 after Ctrl-C (which prints the statistics first).\n" +
			"-i, -W and -w take seconds (0.2) or a duration (200ms).",
		Example: "  urmactl ping 127.0.0.2 -c 3                     # any loopback context at 127.0.0.2\n" +
			"  urmactl ping 127.0.0.1/2864434397 -c 1 -q       # one context, by UASID\n" +
			"  urmactl ping -l -d rxe0                          # on the peer host: answer pings to its EID\n" +
			"  urmactl ping -d rxe0 -c 5 -i 0.2 10.0.0.2        # then, from another host\n" +
			"  urmactl ping -d rxe0 -w 10 -W 1 fd00::2/40123   # one context, by its UASID",
		Args: usageArgs(func(cmd *cobra.Command, args []string) error {
			if o.Listen {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		}),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Target = args[0]
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return Ping(ctx, cmd.OutOrStdout(), o)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&o.Count, "count", "c", 0, "stop after this many requests (default: until -w or Ctrl-C)")
	f.VarP(seconds{&o.Interval}, "interval", "i", "time between requests")
	f.VarP(seconds{&o.Timeout}, "timeout", "W", "time to wait for each reply")
	f.VarP(seconds{&o.Deadline}, "deadline", "w", "stop after this long, whatever -c says (default: no deadline)")
	f.IntVarP(&o.Size, "size", "s", DefaultPingSize, "bytes of data each request carries and the reply echoes (at most 4096 on loopback, 16 on ib)")
	f.StringVarP(&o.Device, "dev", "d", "loopback0", "device to ping from")
	f.IntVar(&o.EID, "eid", 0, "EID index on the device to ping from (or, with -l, to answer on)")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "print only the first and the statistics lines")
	f.BoolVarP(&o.Listen, "listen", "l", false, "answer pings to this host's EID until Ctrl-C (what ib peers need)")
	return cmd
}

// seconds is the value of ping's time flags: seconds, fractions allowed,
// as iputils ping takes them, or a Go duration.
type seconds struct{ d *time.Duration }

func (s seconds) String() string {
	if s.d == nil || *s.d == 0 {
		return "0" // which help leaves out, as for any flag's zero
	}
	return s.d.String()
}

func (s seconds) Set(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		if f < 0 || f > float64(math.MaxInt64/int64(time.Second)) {
			return fmt.Errorf("%s seconds is out of range", v)
		}
		*s.d = time.Duration(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("want seconds (0.5) or a duration (500ms), not negative")
	}
	*s.d = d
	return nil
}

func (seconds) Type() string { return "seconds" }

// parsePingTarget reads EID or EID/UASID; the UASID is decimal or 0x hex.
func parsePingTarget(s string) (urma.EID, uint32, error) {
	addr, u, hasU := strings.Cut(s, "/")
	eid, err := urma.ParseEID(addr)
	if err != nil {
		return urma.EID{}, 0, fmt.Errorf("target %q: want an EID (an IPv4 or IPv6 address) or EID/UASID", s)
	}
	if !hasU {
		return eid, 0, nil
	}
	n, err := strconv.ParseUint(u, 0, 32)
	if err != nil || n == 0 {
		return urma.EID{}, 0, fmt.Errorf("target %q: UASID %q is not a number from 1 to %d", s, u, uint32(math.MaxUint32))
	}
	return eid, uint32(n), nil
}

// pingStats are the numbers of a run's statistics.
type pingStats struct {
	sent, received, errors int
	min, max, sum, sum2    float64 // milliseconds
}

func (st *pingStats) add(rtt time.Duration) {
	ms := float64(rtt) / float64(time.Millisecond)
	if st.received == 0 || ms < st.min {
		st.min = ms
	}
	st.max = max(st.max, ms)
	st.received++
	st.sum += ms
	st.sum2 += ms * ms
}

func (st *pingStats) write(w io.Writer, target string, elapsed time.Duration) {
	fmt.Fprintf(w, "\n--- %s urma ping statistics ---\n", target)
	loss := 0.0
	if st.sent > 0 {
		loss = 100 * float64(st.sent-st.received) / float64(st.sent)
	}
	errs := ""
	if st.errors > 0 {
		errs = fmt.Sprintf(", +%d errors", st.errors)
	}
	fmt.Fprintf(w, "%d packets transmitted, %d received%s, %.4g%% packet loss, time %dms\n",
		st.sent, st.received, errs, loss, elapsed.Milliseconds())
	if st.received > 0 {
		n := float64(st.received)
		avg := st.sum / n
		mdev := math.Sqrt(max(0, st.sum2/n-avg*avg))
		fmt.Fprintf(w, "rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms\n", st.min, avg, st.max, mdev)
	}
}

// Ping runs the ping command's client, or with o.Listen its responder,
// writing what ping prints to out. The error's ExitCode is the command's
// status: an *ExitError for no reply (1) and for an interrupt (130), a
// UsageError for bad options.
func Ping(ctx context.Context, out io.Writer, o PingOptions) error {
	if err := checkPing(o); err != nil {
		return err
	}
	dev, err := urma.DeviceByName(o.Device)
	if err != nil {
		return err
	}
	uc, err := urma.Open(dev, o.EID, nil)
	if err != nil {
		return err
	}
	defer uc.Close()
	if o.Listen {
		l, err := uc.ListenPing()
		if err != nil {
			return err
		}
		defer l.Close()
		fmt.Fprintf(out, "answering urma pings to %s on %s (uasid %d) until Ctrl-C\n", eidText(uc.EID()), dev.Name(), uc.UASID())
		<-ctx.Done()
		return &ExitError{Code: ExitInterrupted}
	}
	eid, uasid, err := parsePingTarget(o.Target)
	if err != nil {
		return usage(err)
	}
	if maxSize := uc.MaxPingSize(); maxSize > 0 && o.Size > maxSize {
		return usage(fmt.Errorf("size %d: %s carries at most %d bytes", o.Size, dev.Name(), maxSize))
	}
	return pingLoop(ctx, out, uc, o, eid, uasid)
}

func checkPing(o PingOptions) error {
	switch {
	case o.Count < 0:
		return usage(fmt.Errorf("count %d: want 1 or more (0 for no limit)", o.Count))
	case o.Size < 0:
		return usage(fmt.Errorf("size %d: want 0 or more", o.Size))
	case o.Interval <= 0:
		return usage(fmt.Errorf("interval %v: want more than 0", o.Interval))
	case o.Timeout <= 0:
		return usage(fmt.Errorf("timeout %v: want more than 0", o.Timeout))
	case o.Deadline < 0:
		return usage(fmt.Errorf("deadline %v: want 0 (none) or more", o.Deadline))
	case o.EID < 0:
		return usage(fmt.Errorf("eid index %d: want 0 or more", o.EID))
	}
	return nil
}

func pingLoop(ctx context.Context, out io.Writer, uc *urma.Context, o PingOptions, eid urma.EID, uasid uint32) error {
	target := eidText(eid)
	if uasid != 0 {
		target = fmt.Sprintf("%s/%d", target, uasid)
	}
	fmt.Fprintf(out, "PING %s from %s %s: %d data bytes\n", target, eidText(uc.EID()), uc.Device().Name(), o.Size)
	start := time.Now()
	run := ctx
	if o.Deadline > 0 {
		var cancel context.CancelFunc
		run, cancel = context.WithTimeout(ctx, o.Deadline)
		defer cancel()
	}
	var st pingStats
	opts := &urma.PingOptions{UASID: uasid, Size: o.Size}
	next := start
	for seq := 1; o.Count == 0 || seq <= o.Count; seq++ {
		if seq > 1 {
			next = next.Add(o.Interval)
			if !sleepUntil(run, next) {
				break
			}
		}
		pctx, cancel := context.WithTimeout(run, o.Timeout)
		st.sent++
		rtt, err := uc.Ping(pctx, eid, opts)
		timedOut := pctx.Err() != nil && run.Err() == nil
		cancel()
		switch {
		case err == nil:
			st.add(rtt)
			if !o.Quiet {
				fmt.Fprintf(out, "%d bytes from %s: seq=%d time=%s ms\n", o.Size, target, seq, formatMs(rtt))
			}
		case run.Err() != nil:
			// Stopped during the request, which is not counted.
			st.sent--
		case timedOut:
			if !o.Quiet {
				fmt.Fprintf(out, "no reply from %s: seq=%d within %v\n", target, seq, o.Timeout)
			}
		case st.received == 0 && (errors.Is(err, urma.ErrNotFound) || errors.Is(err, urma.ErrNotSupported)):
			// Nobody has the EID, or the device cannot ping: say so at
			// once, as ping does of an unknown host.
			return err
		default:
			st.errors++
			if !o.Quiet {
				fmt.Fprintf(out, "From %s: seq=%d %s\n", target, seq, safe(err.Error()))
			}
		}
		if run.Err() != nil {
			break
		}
	}
	st.write(out, target, time.Since(start))
	switch {
	case ctx.Err() != nil:
		return &ExitError{Code: ExitInterrupted}
	case st.received == 0:
		return &ExitError{Code: 1, Msg: "no reply from " + target}
	case o.Count > 0 && o.Deadline > 0 && st.received < o.Count:
		return &ExitError{Code: 1, Msg: fmt.Sprintf("%d of %d replies from %s before the deadline", st.received, o.Count, target)}
	}
	return nil
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// formatMs prints a round trip as ping does: three significant digits
// below 100 ms.
func formatMs(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 1:
		return strconv.FormatFloat(ms, 'f', 3, 64)
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64)
	case ms < 100:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	}
	return strconv.FormatFloat(ms, 'f', 0, 64)
}

// eidText is an EID as ping prints it: an IPv4-mapped one as the IPv4
// address it stands for.
func eidText(e urma.EID) string { return e.Addr().Unmap().String() }
