// Command eventrecv receives messages in event mode: between messages its
// goroutine sleeps on a JFCE, using no CPU, and a cancel (Ctrl-C) or the
// end of -for wakes it at once. A sender in another process gets the JFR
// in a bootstrap bundle over TCP.
//
//	go run ./examples/eventrecv serve -addr 127.0.0.1:7472 -for 1m
//	go run ./examples/eventrecv send -addr 127.0.0.1:7472 hello world
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

const size, slots = 256, 8

func main() {
	log.SetFlags(0)
	log.SetPrefix("eventrecv: ")
	if len(os.Args) < 2 || (os.Args[1] != "serve" && os.Args[1] != "send") {
		log.Print("usage: eventrecv serve [-addr A] [-for D] | eventrecv send [-addr A] MESSAGE...")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:7472", "the receiver's TCP address for the bootstrap")
	limit := fs.Duration("for", time.Minute, "serve: how long to receive")
	_ = fs.Parse(os.Args[2:])
	dev := must(urma.DeviceByName("loopback0"))
	uctx := must(urma.Open(dev, 0, nil))
	defer uctx.Close()
	if os.Args[1] == "serve" {
		// Ctrl-C or -for ends the wait, whether it spins or sleeps.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		ctx, cancel := context.WithTimeout(ctx, *limit)
		defer cancel()
		serve(ctx, uctx, *addr)
	} else {
		send(uctx, *addr, fs.Args())
	}
}

func serve(ctx context.Context, uctx *urma.Context, addr string) {
	jfce := must(jetty.NewJFCE(uctx))
	jfc := must(jetty.NewJFC(uctx, jetty.JFCConfig{Depth: slots, JFCE: jfce})) // event mode
	jfr := must(jetty.NewJFR(uctx, jetty.JFRConfig{Depth: slots, JFC: jfc}))
	mem := must(segment.Alloc(uctx, slots*size, segment.Config{Access: segment.LocalOnly}))
	for i := range uint64(slots) {
		check(jfr.Recv(mem.SGE(i*size, size), i))
	}
	var b bootstrap.Bundle
	b.AddJFR("inbox", jfr, 0)
	l := must(net.Listen("tcp", addr))
	defer l.Close()
	fmt.Printf("receiving on %s\n", l.Addr())
	go func() { // hand the bundle to each sender that connects
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_ = bootstrap.Write(ctx, conn, &b)
			conn.Close()
		}
	}()

	crs := make([]jetty.CR, slots)
	got := 0
	for {
		// No spinning: PollWait arms the JFC and sleeps on the JFCE until a
		// record, or until ctx ends.
		n, err := jfc.PollWait(ctx, crs, 0)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			fmt.Printf("stopped (%v) after %d messages\n", context.Cause(ctx), got)
			return
		}
		check(err)
		for _, cr := range crs[:n] {
			check(cr.Err())
			fmt.Printf("received %q\n", mem.Bytes()[cr.UserCtx*size:][:cr.Len])
			check(jfr.Recv(mem.SGE(cr.UserCtx*size, size), cr.UserCtx))
			got++
		}
	}
}

func send(uctx *urma.Context, addr string, msgs []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := must(net.Dial("tcp", addr))
	b, err := bootstrap.Read(ctx, conn)
	conn.Close()
	check(err)
	to := must(b.Import(ctx, uctx, "inbox"))
	jfc := must(jetty.NewJFC(uctx, jetty.JFCConfig{Depth: 8}))
	jfs := must(jetty.NewJFS(uctx, jetty.JFSConfig{Depth: 8, JFC: jfc}))
	buf := must(segment.Alloc(uctx, size, segment.Config{Access: segment.LocalOnly}))
	crs := make([]jetty.CR, 1)
	for _, m := range msgs {
		n := copy(buf.Bytes(), m)
		check(jfs.Send(to, buf.SGE(0, uint32(n)), 0, 0))
		must(jfc.PollWait(ctx, crs, 0))
		check(crs[0].Err())
	}
	fmt.Printf("sent %d messages\n", len(msgs))
}

func must[T any](v T, err error) T {
	check(err)
	return v
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
