// Command kv is a key-value store in the HERD design: clients WRITE their
// requests into the server's memory, server workers poll that memory,
// execute GET and PUT on a hash table and answer with SENDs. It doubles as
// its own load generator, reporting Mops and latency percentiles.
//
//	go run ./examples/kv                                 # both sides, one process
//	go run ./examples/kv -server -addr 127.0.0.1:18600
//	go run ./examples/kv -client -addr 127.0.0.1:18600 -clients 4 -window 16 -duration 10s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/urma-go/sdk/examples/internal/exutil"
)

// config is the command line.
type config struct {
	exutil.Common
	workers  int // server
	clients  int
	threads  int
	window   int
	value    int
	keys     int
	getRatio float64
	requests int64
	duration time.Duration
	signal   int
	preload  bool
	spin     time.Duration
	batch    bool
}

const defaultAddr = "127.0.0.1:18600"

// defaultSpin is how long an event-mode wait polls before it sleeps: a
// response or request that comes within it costs no wake-up, and an idle
// side gives its core away soon after.
const defaultSpin = 20 * time.Microsecond

func (c *config) register(fs *flag.FlagSet) {
	c.Common.Register(fs, defaultAddr)
	fs.IntVar(&c.workers, "workers", 1, "server: worker goroutines, each polling its part of the request region")
	fs.IntVar(&c.clients, "clients", 1, "load generator: clients (each with its own queues and window)")
	fs.IntVar(&c.threads, "threads", 0, "load generator: goroutines driving the clients, each polling one JFC (0: one per client)")
	fs.IntVar(&c.window, "window", 16, "load generator: outstanding requests per client")
	fs.IntVar(&c.value, "value", 32, fmt.Sprintf("value size in bytes (1 to %d)", maxValue))
	fs.IntVar(&c.keys, "keys", 1<<16, "key space; client i of n uses the keys i, i+n, ...")
	fs.Float64Var(&c.getRatio, "get-ratio", 0.95, "fraction of GETs (the rest are PUTs)")
	fs.Int64Var(&c.requests, "requests", 0, "stop after this many requests (0: no limit)")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "stop after this long (0: no limit)")
	fs.IntVar(&c.signal, "signal", 16, "signal one of every N sends (server) and WRITEs (clients)")
	fs.BoolVar(&c.preload, "preload", true, "load generator: PUT every key once before measuring")
	fs.DurationVar(&c.spin, "spin", defaultSpin, "event mode: poll this long before sleeping (0: sleep at once)")
	fs.BoolVar(&c.batch, "batch", false, "load generator: issue a window of requests only once the last window is answered (redis-benchmark -P)")
}

func (c *config) validate() error {
	if err := c.Common.Validate(); err != nil {
		return err
	}
	if c.workers < 1 || c.workers > maxWorkers {
		return fmt.Errorf("-workers %d: want 1 to %d", c.workers, maxWorkers)
	}
	if c.spin < 0 {
		return fmt.Errorf("-spin %v: want 0 or more", c.spin)
	}
	if c.signal < 1 || c.signal > 1024 {
		return fmt.Errorf("-signal %d: want 1 to 1024", c.signal)
	}
	if c.Server {
		return nil
	}
	if c.threads < 0 {
		return fmt.Errorf("-threads %d: want 0 or more", c.threads)
	}
	if err := checkSession(c.clients, c.window, c.value); err != nil {
		return fmt.Errorf("-clients, -window, -value: %w", err)
	}
	// A client picks a key with no request outstanding, so it needs more
	// keys than its window.
	if c.keys < c.clients*(c.window+1) {
		return fmt.Errorf("-keys %d: want at least clients x (window+1) = %d", c.keys, c.clients*(c.window+1))
	}
	if !(c.getRatio >= 0 && c.getRatio <= 1) {
		return fmt.Errorf("-get-ratio %v: want 0 to 1", c.getRatio)
	}
	if c.requests < 0 || c.duration < 0 || c.requests == 0 && c.duration == 0 {
		return fmt.Errorf("-requests %d, -duration %v: want one of them positive, neither negative", c.requests, c.duration)
	}
	return nil
}

// parseArgs parses and checks a command line; flag errors are printed to
// stderr by the flag package.
func parseArgs(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("kv", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.register(fs)
	if err := fs.Parse(args); err != nil {
		return cfg, flagError{err}
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return cfg, cfg.validate()
}

// flagError is an error the flag package has printed with the usage.
type flagError struct{ error }

func (e flagError) Unwrap() error { return e.error }

func main() {
	cfg, err := parseArgs(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		if !errors.As(err, new(flagError)) { // the flag package said it already
			fmt.Fprintln(os.Stderr, "kv:", err)
		}
		os.Exit(2)
	}
	ctx, stop := exutil.Interruptible()
	_, err = run(ctx, os.Stdout, cfg)
	interrupted := ctx.Err() != nil
	stop()
	if err != nil && !(interrupted && errors.Is(err, context.Canceled)) {
		fmt.Fprintln(os.Stderr, "kv:", err)
	}
	switch {
	case interrupted:
		fmt.Fprintln(os.Stderr, "kv: interrupted")
		os.Exit(exutil.ExitInterrupted)
	case err != nil:
		os.Exit(1)
	}
}

// dialWait is how long a client retries a server that is not listening
// yet.
const dialWait = 10 * time.Second

// run runs what cfg asks for: the server until ctx is done, the load
// generator against a server, or both in one process.
func run(ctx context.Context, out io.Writer, cfg config) (res result, err error) {
	if err := cfg.validate(); err != nil {
		return result{}, err
	}
	out = exutil.LockedWriter(out)
	if cfg.Client {
		conn, err := exutil.Dial(ctx, cfg.Addr, dialWait)
		if err != nil {
			return result{}, err
		}
		defer conn.Close()
		return loadgen(ctx, out, cfg, conn)
	}
	srv, err := newServer(cfg, out)
	if err != nil {
		return result{}, err
	}
	defer func() { err = errors.Join(err, srv.close()) }()
	if cfg.Server {
		l, err := net.Listen("tcp", cfg.Addr)
		if err != nil {
			return result{}, err
		}
		return result{}, srv.serve(ctx, l, false)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return result{}, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.serve(sctx, l, true) }()
	conn, err := exutil.Dial(ctx, l.Addr().String(), dialWait)
	if err != nil {
		cancel()
		return result{}, errors.Join(err, <-served)
	}
	res, err = loadgen(ctx, out, cfg, conn)
	_ = conn.Close()
	if err != nil {
		// Stop the server; its error matters when it is not an echo of
		// the client's.
		cancel()
		if serr := <-served; serr != nil && !errors.Is(serr, context.Canceled) && !errors.Is(serr, errClientLeft) {
			err = errors.Join(err, fmt.Errorf("server: %w", serr))
		}
		return res, err
	}
	err = <-served
	res.server = srv.last
	return res, err
}
