// Command grpc serves gRPC over URMA: grpc.NewServer().Serve takes a
// urmanet Listener, the client dials through grpc.WithContextDialer with
// urmanet, and the rest is gRPC as usual. The service is written by hand
// (no protoc): Echo, a unary call, and Chat, a bidirectional stream, on
// protobuf's well-known BytesValue, beside gRPC's own health service. The
// client checks health, makes one Echo call and streams messages from
// 1 byte to 1 MiB through Chat, each echoed back. Both sides run in one
// process unless -server or -client is given.
//
//	go run .
//	go run . -server -addr :7481     # terminal 1
//	go run . -client -addr :7481     # terminal 2
//	go run -tags urma_verbs . -provider ib -dev rxe0
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"google.golang.org/grpc"

	"github.com/urma-go/sdk/examples/internal/exutil"
)

func main() {
	var cfg exutil.Net
	fs := flag.NewFlagSet("grpc", flag.ExitOnError)
	cfg.Register(fs, 7481)
	_ = fs.Parse(os.Args[1:])
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "grpc:", err)
		os.Exit(2)
	}
	ctx, stop := exutil.Interruptible()
	defer stop()
	err := run(ctx, os.Stdout, cfg)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Println("grpc: interrupted")
		stop()
		os.Exit(exutil.ExitInterrupted)
	case err != nil:
		fmt.Fprintln(os.Stderr, "grpc:", err)
		os.Exit(1)
	}
}

// run runs the server, the client or both, as cfg says.
func run(ctx context.Context, w io.Writer, cfg exutil.Net) error {
	w = exutil.LockedWriter(w)
	switch {
	case cfg.Server:
		return runServer(ctx, w, cfg)
	case cfg.Client:
		addr, err := cfg.Target()
		if err != nil {
			return err
		}
		return runClient(ctx, w, cfg, addr)
	}
	uctx, err := cfg.Open(false)
	if err != nil {
		return err
	}
	defer uctx.Close()
	l, err := cfg.Listen(uctx)
	if err != nil {
		return err
	}
	s := newServer(w, uctx, l)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	err = runClient(ctx, w, cfg, l.Addr().String())
	stopServer(s)
	return errors.Join(err, <-served)
}

// runServer serves until ctx is done.
func runServer(ctx context.Context, w io.Writer, cfg exutil.Net) error {
	uctx, err := cfg.Open(false)
	if err != nil {
		return err
	}
	defer uctx.Close()
	l, err := cfg.Listen(uctx)
	if err != nil {
		return err
	}
	s := newServer(w, uctx, l)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stopServer(s)
	return errors.Join(ctx.Err(), <-served)
}

// stopServer lets the calls in progress finish, for a while.
func stopServer(s *grpc.Server) {
	t := time.AfterFunc(10*time.Second, s.Stop)
	defer t.Stop()
	s.GracefulStop()
}
