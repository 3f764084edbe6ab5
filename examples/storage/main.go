// Command storage is a storage protocol with CRC32 + UMR, on urma-go's
// views: a client writes and reads objects; the server keeps
// them in 4096-byte chunks of 4048 data and 48 metadata bytes, and small
// payloads travel in the SENDs while larger ones are READ or WRITten by the
// server through views that check or carry each chunk's CRC32 on the
// transfer itself.
//
//	storage                                   # server and client in one process
//	storage -server                           # terminal 1
//	storage -client -count 10000 -size 65535  # terminal 2
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/urma-go/sdk/examples/internal/exutil"
)

// config is the command line.
type config struct {
	exutil.Common
	chunks  int
	count   int
	size    int
	readPct int
	keys    int
	corrupt bool
}

func main() {
	var c config
	fs := flag.NewFlagSet("storage", flag.ContinueOnError)
	c.Register(fs, "127.0.0.1:7475")
	fs.IntVar(&c.chunks, "chunks", 4096, "server: chunks in the store (4096 bytes each)")
	fs.IntVar(&c.count, "count", 1000, "client: requests")
	fs.IntVar(&c.size, "size", 16384, fmt.Sprintf("client: payload bytes, 1 to %d (up to %d travel in the SEND)", maxPayload, inlineMax))
	fs.IntVar(&c.readPct, "read-pct", 50, "client: percentage of reads")
	fs.IntVar(&c.keys, "keys", 64, "client: distinct IDs")
	fs.BoolVar(&c.corrupt, "corrupt", false, "client: first send one write whose data goes bad on the way, and check that the server refuses it")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if err := c.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "storage:", err)
		os.Exit(2)
	}
	ctx, stop := exutil.Interruptible()
	defer stop()
	err := run(ctx, os.Stdout, c)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Println("storage: interrupted")
		stop()
		os.Exit(exutil.ExitInterrupted)
	case err != nil:
		fmt.Fprintln(os.Stderr, "storage:", err)
		os.Exit(1)
	}
}

func (c config) validate() error {
	if err := c.Common.Validate(); err != nil {
		return err
	}
	switch {
	case c.chunks < 1:
		return fmt.Errorf("-chunks %d: want at least 1", c.chunks)
	case c.count < 0:
		return fmt.Errorf("-count %d: want 0 or more", c.count)
	case c.size < 1 || c.size > maxPayload:
		return fmt.Errorf("-size %d: want 1 to %d (the header's Size is 16 bits)", c.size, maxPayload)
	case c.readPct < 0 || c.readPct > 100:
		return fmt.Errorf("-read-pct %d: want 0 to 100", c.readPct)
	case c.keys < 1:
		return fmt.Errorf("-keys %d: want at least 1", c.keys)
	}
	return nil
}
