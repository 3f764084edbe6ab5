// Command echo is a SEND/RECV echo between two processes: the server sends
// back every message it receives, and the client checks the echoes. Each
// side has a JFR for what it receives and a JFS to send; they swap their
// JFRs in bootstrap bundles over TCP.
//
//	go run ./examples/echo serve -addr 127.0.0.1:7471
//	go run ./examples/echo send -addr 127.0.0.1:7471 hello world
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"time"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

const size = 256 // the largest message

// end is one side: queues, and a segment of receive slots and a send buffer.
type end struct {
	jfc  *jetty.JFC // both queues complete here
	jfs  *jetty.JFS
	jfr  *jetty.JFR
	mem  *segment.Segment // receive slots 0..7, send buffer at 8
	crs  []jetty.CR
	peer *jetty.Remote
}

func newEnd(uctx *urma.Context) *end {
	e := &end{crs: make([]jetty.CR, 1)}
	e.jfc = must(jetty.NewJFC(uctx, jetty.JFCConfig{Depth: 16}))
	e.jfs = must(jetty.NewJFS(uctx, jetty.JFSConfig{Depth: 8, JFC: e.jfc}))
	e.jfr = must(jetty.NewJFR(uctx, jetty.JFRConfig{Depth: 8, JFC: e.jfc}))
	e.mem = must(segment.Alloc(uctx, 9*size, segment.Config{Access: segment.LocalOnly}))
	for i := range 8 {
		check(e.jfr.Recv(e.mem.SGE(uint64(i*size), size), uint64(i)))
	}
	return e
}

// next waits for a record and returns it, with the message of a receive
// (a copy: the slot is posted again at once).
func (e *end) next(ctx context.Context) (jetty.CR, string) {
	must(e.jfc.PollWait(ctx, e.crs, 0))
	cr := e.crs[0]
	check(cr.Err())
	if cr.Flags&jetty.CRRecv == 0 {
		return cr, ""
	}
	msg := string(e.mem.Bytes()[cr.UserCtx*size:][:cr.Len])
	check(e.jfr.Recv(e.mem.SGE(cr.UserCtx*size, size), cr.UserCtx))
	return cr, msg
}

// post sends msg from the send buffer; its record comes later.
func (e *end) post(msg string) {
	n := copy(e.mem.Bytes()[8*size:], msg)
	check(e.jfs.Send(e.peer, e.mem.SGE(8*size, uint32(n)), 0, 99))
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("echo: ")
	if len(os.Args) < 2 || (os.Args[1] != "serve" && os.Args[1] != "send") {
		log.Print("usage: echo serve [-addr A] | echo send [-addr A] MESSAGE...")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:7471", "the server's TCP address for the bootstrap")
	_ = fs.Parse(os.Args[2:])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	uctx := must(urma.Open(must(urma.DeviceByName("loopback0")), 0, nil))
	defer uctx.Close()
	e := newEnd(uctx)
	var mine bootstrap.Bundle
	mine.AddJFR("inbox", e.jfr, 0)

	var conn net.Conn
	if os.Args[1] == "serve" {
		l := must(net.Listen("tcp", *addr))
		fmt.Printf("serving on %s\n", l.Addr())
		conn = must(l.Accept())
		l.Close()
	} else {
		conn = must(net.Dial("tcp", *addr))
	}
	defer conn.Close()
	e.peer = must(must(bootstrap.Exchange(ctx, conn, &mine)).Import(ctx, uctx, "inbox"))

	if os.Args[1] == "serve" { // echo until the client says bye
		for {
			cr, msg := e.next(ctx)
			if cr.Flags&jetty.CRRecv == 0 {
				continue // an echo's send completed
			}
			e.post(msg)
			if msg == "bye" {
				e.next(ctx) // the bye's echo completes before the end
				fmt.Println("client said bye")
				return
			}
		}
	}
	for _, m := range append(fs.Args(), "bye") {
		e.post(m)
		sent, got, echo := false, false, ""
		for !sent || !got { // the echo may come before the send's record
			cr, msg := e.next(ctx)
			if cr.Flags&jetty.CRRecv == 0 {
				sent = true
			} else {
				echo, got = msg, true
			}
		}
		if echo != m {
			log.Fatalf("sent %q, got %q back", m, echo)
		}
		fmt.Printf("echoed %q\n", echo)
	}
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
