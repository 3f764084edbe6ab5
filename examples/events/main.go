// Command events runs the same SEND ping-pong busy-polling the JFC and in
// JFCE event mode, and prints latency percentiles next to the CPU time each
// mode used: polling burns a core for the lowest latency, events sleep in
// the kernel and pay a wake-up per message.
//
//	go run ./examples/events                         # both modes, one process
//	go run ./examples/events -server                 # terminal 1
//	go run ./examples/events -client -mode event     # terminal 2
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/urma-go/sdk/examples/internal/exutil"
)

const (
	defaultAddr = "127.0.0.1:7474"
	// maxSize keeps the receive slots small: this program is about
	// latency, and the server allocates what the client asks for.
	maxSize     = 1 << 20
	maxInterval = time.Second
	maxCount    = math.MaxInt32 // fits an int everywhere
)

// config is the command line.
type config struct {
	exutil.Common
	count int
	size  int
	// interval is the client's pause between round trips.
	interval time.Duration
	// modes are the completion modes -mode names, in the order they run.
	modes []string
	// clientFlags records -count, -size or -interval given to a server, which takes
	// them from its client instead.
	clientFlags bool
	args        []string // left after the flags
}

// parseFlags reads the command line; fs prints its own parse errors.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("events", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.Register(fs, defaultAddr)
	// The comparison is the point of this example, so -mode defaults to
	// running both instead of exutil's poll.
	mode := fs.Lookup("mode")
	mode.Usage = "completion mode: poll|event|both (a server given both follows its client)"
	mode.DefValue, cfg.Mode = "both", "both"
	fs.IntVar(&cfg.count, "count", 10000, "round trips per mode (a server takes its client's)")
	fs.IntVar(&cfg.size, "size", 64, "message size in bytes (a server takes its client's)")
	fs.DurationVar(&cfg.interval, "interval", 0, "client's pause between round trips (idle time; about 1ms at least)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.args = fs.Args()
	fs.Visit(func(f *flag.Flag) {
		cfg.clientFlags = cfg.clientFlags || f.Name == "count" || f.Name == "size" || f.Name == "interval"
	})
	return cfg, nil
}

// validate checks what needs no device.
func (c *config) validate() error {
	if len(c.args) > 0 {
		return fmt.Errorf("unexpected argument %q", c.args[0])
	}
	switch c.Mode {
	case "poll", "event":
		c.modes = []string{c.Mode}
	case "both":
		c.modes = []string{"poll", "event"}
	default:
		return fmt.Errorf("-mode %q: want poll, event or both", c.Mode)
	}
	one := c.Common
	one.Mode = c.modes[0]
	if err := one.Validate(); err != nil {
		return err
	}
	if c.Server && c.clientFlags {
		return errors.New("-count, -size and -interval belong to the client: a server takes them from it")
	}
	if c.count <= 0 || c.count > maxCount {
		return fmt.Errorf("-count %d: want a positive number of round trips", c.count)
	}
	if c.size <= 0 || c.size > maxSize {
		return fmt.Errorf("-size %d: want 1 to %d bytes", c.size, maxSize)
	}
	// The bound keeps a pause well inside the server's waitLimit.
	if c.interval < 0 || c.interval > maxInterval {
		return fmt.Errorf("-interval %v: want 0 to %v", c.interval, maxInterval)
	}
	return nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err == nil {
		err = cfg.validate()
		if err != nil {
			fmt.Fprintln(os.Stderr, "events:", err)
		}
	}
	if err != nil {
		os.Exit(2)
	}
	ctx, stop := exutil.Interruptible()
	err = run(ctx, cfg, os.Stdout)
	interrupted := ctx.Err() != nil
	stop()
	switch {
	case err != nil && interrupted:
		// run has freed everything on its way out.
		fmt.Fprintln(os.Stderr, "events: interrupted")
		os.Exit(exutil.ExitInterrupted)
	case err != nil:
		fmt.Fprintln(os.Stderr, "events:", err)
		os.Exit(1)
	}
}
