// Command recover shows a program that meets a remote error and goes on:
// the client WRITEs into the server's segment, the server unregisters it,
// the client's next WRITE fails, its JFS goes to ERROR and raises an async
// event; the client acks the event, flushes and resets the JFS, imports
// the segment the server registers instead, and WRITEs again. Both sides
// run in one process unless -server or -client is given.
//
//	go run ./examples/recover
//	go run ./examples/recover -server -addr 127.0.0.1:7473    # terminal 1
//	go run ./examples/recover -client -addr 127.0.0.1:7473    # terminal 2
//	go run -tags urma_verbs ./examples/recover -provider ib -dev rxe0
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/urma-go/sdk/examples/internal/exutil"
)

func main() {
	var cfg exutil.Common
	fs := flag.NewFlagSet("recover", flag.ExitOnError)
	cfg.Register(fs, "127.0.0.1:7473")
	_ = fs.Parse(os.Args[1:])
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "recover:", err)
		os.Exit(2)
	}
	ctx, stop := exutil.Interruptible()
	defer stop()
	err := run(ctx, os.Stdout, cfg)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Println("recover: interrupted")
		stop()
		os.Exit(exutil.ExitInterrupted)
	case err != nil:
		fmt.Fprintln(os.Stderr, "recover:", err)
		os.Exit(1)
	}
}

// run runs the server, the client or both, as cfg says.
func run(ctx context.Context, w io.Writer, cfg exutil.Common) error {
	w = exutil.LockedWriter(w)
	switch {
	case cfg.Server:
		l, err := net.Listen("tcp", cfg.Addr)
		if err != nil {
			return err
		}
		return serve(ctx, w, cfg, l)
	case cfg.Client:
		return runClient(ctx, w, cfg, cfg.Addr)
	}
	return exutil.Both(
		func(l net.Listener) error { return serve(ctx, w, cfg, l) },
		func(addr string) error { return runClient(ctx, w, cfg, addr) })
}
