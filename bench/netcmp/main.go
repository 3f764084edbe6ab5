// Command netcmp compares package urmanet (net.Conn over URMA, on the
// loopback provider) with TCP over 127.0.0.1 and with unix sockets, like
// for like, and prints a markdown table of the project's goals:
//
//	go run . [-rounds N] [-only ROWS] [-n ROUNDTRIPS] [-mib MIB]
//
// The client is this process; the server is the same program run again
// as a child process, listening on every transport, so that every
// transport runs between two processes. Both sides run the same code on
// every transport (plain Read and Write on a net.Conn; the same gRPC
// service), each transport in its default configuration (Go's TCP, with
// TCP_NODELAY). Every row runs its two sides in paired rounds, urmanet
// first in odd rounds and the reference first in even ones; a row's
// ratio is the median of the per-round ratios urmanet/reference.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/urmanet"
)

// rowSpec is one goal of the table. ratio is urmanet/reference; lower
// says whether the goal is a ratio at most limit (latency) or at least
// limit (throughput).
type rowSpec struct {
	key, goal, unit string
	lower           bool
	limit           float64
}

func (r rowSpec) target() string {
	if r.lower {
		return fmt.Sprintf("<=%g", r.limit)
	}
	return fmt.Sprintf(">=%g", r.limit)
}

func (r rowSpec) met(ratio float64) bool {
	if r.lower {
		return ratio <= r.limit
	}
	return ratio >= r.limit
}

const (
	echoSize  = 64
	writeSize = 1 << 20
	grpcMsg   = 64 << 10
)

var rows = []rowSpec{
	{"echo-poll", "64 B echo round trip, poll mode (vs TCP 127.0.0.1)", "us", true, 0.1},
	{"echo", "64 B echo round trip, default mode (vs unix socket)", "us", true, 0.5},
	{"stream", "stream of 1 MiB writes, default mode (vs unix socket)", "MB/s", false, 2},
	{"grpc-unary", "gRPC unary 64 B, p50 (vs gRPC over TCP 127.0.0.1)", "us", true, 0.6},
	{"grpc-stream", "gRPC client stream, 64 KiB messages (vs gRPC over TCP 127.0.0.1)", "MB/s", false, 1.5},
}

func rowKeys() []string {
	var ks []string
	for _, r := range rows {
		ks = append(ks, r.key)
	}
	return ks
}

var errUsage = errors.New("usage")

func main() {
	if os.Getenv(roleEnv) == "server" {
		os.Exit(serverMain())
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "netcmp:", err)
		os.Exit(1)
	}
}

type config struct {
	rounds, n int
	mib       int64
	only      []string
}

func parse(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("netcmp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	only := fs.String("only", "", "comma-separated rows to run (default all): "+strings.Join(rowKeys(), ","))
	fs.IntVar(&c.rounds, "rounds", 8, "paired rounds per row")
	fs.IntVar(&c.n, "n", 2000, "timed round trips or calls per latency round")
	fs.Int64Var(&c.mib, "mib", 64, "MiB per throughput round")
	if err := fs.Parse(args); err != nil {
		return c, errUsage
	}
	bad := func(format string, a ...any) (config, error) {
		fmt.Fprintf(stderr, "netcmp: "+format+"\n", a...)
		fs.Usage()
		return c, errUsage
	}
	if fs.NArg() > 0 {
		return bad("unexpected arguments %q", fs.Args())
	}
	if c.rounds < 1 || c.n < 1 || c.mib < 1 {
		return bad("-rounds, -n and -mib must be at least 1 (got %d, %d, %d)", c.rounds, c.n, c.mib)
	}
	if *only == "" {
		c.only = rowKeys()
		return c, nil
	}
	for k := range strings.SplitSeq(*only, ",") {
		if !slices.Contains(rowKeys(), k) {
			return bad("-only: no row %q; rows are %s", k, strings.Join(rowKeys(), ","))
		}
		c.only = append(c.only, k)
	}
	return c, nil
}

// run measures the rows of args' -only and prints the table to stdout,
// progress to stderr.
func run(args []string, stdout, stderr io.Writer) error {
	cfg, err := parse(args, stderr)
	if err != nil {
		return err
	}
	// A runtime directory of its own: the server's contexts are the only
	// ones the client resolves, and the unix socket lives there too.
	dir, err := os.MkdirTemp("", "netcmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if old, ok := os.LookupEnv(loopback.EnvRuntimeDir); ok {
		defer os.Setenv(loopback.EnvRuntimeDir, old)
	} else {
		defer os.Unsetenv(loopback.EnvRuntimeDir)
	}
	os.Setenv(loopback.EnvRuntimeDir, dir)

	a, stop, err := startServer()
	if err != nil {
		return err
	}
	defer stop()

	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		return err
	}
	uctx, err := urma.Open(dev, 1, nil)
	if err != nil {
		return err
	}
	defer uctx.Close()

	netDial := func(network, addr string) dialFunc {
		return func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
	}
	urmaDial := func(poll bool, addr string) dialFunc {
		return func(ctx context.Context) (net.Conn, error) {
			d := urmanet.Dialer{Poll: poll}
			return d.Dial(ctx, uctx, addr)
		}
	}
	warm := max(cfg.n/4, 1)
	total := cfg.mib << 20
	type measure func(context.Context) (float64, error)
	sides := map[string][2]measure{
		"echo-poll": {
			func(ctx context.Context) (float64, error) {
				return echoP50(ctx, urmaDial(true, a.URMAPoll), echoSize, warm, cfg.n)
			},
			func(ctx context.Context) (float64, error) {
				return echoP50(ctx, netDial("tcp", a.TCP), echoSize, warm, cfg.n)
			}},
		"echo": {
			func(ctx context.Context) (float64, error) {
				return echoP50(ctx, urmaDial(false, a.URMA), echoSize, warm, cfg.n)
			},
			func(ctx context.Context) (float64, error) {
				return echoP50(ctx, netDial("unix", a.Unix), echoSize, warm, cfg.n)
			}},
		"stream": {
			func(ctx context.Context) (float64, error) {
				return streamMBps(ctx, urmaDial(false, a.URMA), writeSize, total)
			},
			func(ctx context.Context) (float64, error) {
				return streamMBps(ctx, netDial("unix", a.Unix), writeSize, total)
			}},
		"grpc-unary": {
			func(ctx context.Context) (float64, error) {
				return grpcUnaryP50(ctx, urmaDial(false, a.GRPCURMA), echoSize, warm, cfg.n)
			},
			func(ctx context.Context) (float64, error) {
				return grpcUnaryP50(ctx, netDial("tcp", a.GRPCTCP), echoSize, warm, cfg.n)
			}},
		"grpc-stream": {
			func(ctx context.Context) (float64, error) {
				return grpcStreamMBps(ctx, urmaDial(false, a.GRPCURMA), grpcMsg, total)
			},
			func(ctx context.Context) (float64, error) {
				return grpcStreamMBps(ctx, netDial("tcp", a.GRPCTCP), grpcMsg, total)
			}},
	}

	var results []string
	for _, r := range rows {
		if !slices.Contains(cfg.only, r.key) {
			continue
		}
		side := sides[r.key]
		ours, ref := make([]float64, cfg.rounds), make([]float64, cfg.rounds)
		for k := range cfg.rounds {
			order := []int{0, 1}
			if k%2 == 1 {
				order = []int{1, 0}
			}
			for _, i := range order {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				v, err := side[i](ctx)
				cancel()
				if err != nil {
					return fmt.Errorf("%s, round %d, %s: %w", r.key, k+1, [2]string{"urmanet", "reference"}[i], err)
				}
				if i == 0 {
					ours[k] = v
				} else {
					ref[k] = v
				}
			}
		}
		s := summarize(ours, ref)
		met := "no"
		if r.met(s.ratio) {
			met = "yes"
		}
		fmt.Fprintf(stderr, "netcmp: %s: urmanet %s, reference %s %s, ratio %s\n",
			r.key, num(s.ours), num(s.ref), r.unit, num(s.ratio))
		results = append(results, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s-%s | %s-%s | %s |",
			r.goal, r.target(), num(s.ours), num(s.ref), r.unit, num(s.ratio),
			num(s.q1), num(s.q3), num(s.lowest), num(s.top), met))
	}

	fmt.Fprintf(stdout, "Host: %s.\n\n", host())
	fmt.Fprintf(stdout, "`go run .` in bench/netcmp with -rounds %d -n %d -mib %d: client and server in two processes, "+
		"urmanet on the loopback provider; paired rounds, urmanet first in odd rounds and the reference first in even ones. "+
		"Latency: the p50 of %d round trips per round (whole round trip, in microseconds); throughput: %d MiB per round "+
		"in MB/s of 2^20 bytes. ratio is the median of the per-round ratios urmanet/reference, with their quartiles "+
		"and extremes; urmanet and reference are each side's median over the rounds.\n\n",
		cfg.rounds, cfg.n, cfg.mib, cfg.n, cfg.mib)
	fmt.Fprintln(stdout, "| goal | target | urmanet | reference | unit | ratio | Q1-Q3 | min-max | met |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|---|---|")
	for _, l := range results {
		fmt.Fprintln(stdout, l)
	}
	return nil
}

// startServer runs this program (or test binary) again as the server and
// returns its addresses, and a function that ends it.
func startServer() (addrs, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return addrs{}, nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), roleEnv+"=server")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return addrs{}, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return addrs{}, nil, err
	}
	if err := cmd.Start(); err != nil {
		return addrs{}, nil, err
	}
	stop := func() {
		in.Close()
		done := make(chan struct{})
		go func() {
			cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	var a addrs
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &a)
	}
	if err != nil {
		stop()
		return addrs{}, nil, fmt.Errorf("server process: %w", err)
	}
	return a, stop, nil
}
