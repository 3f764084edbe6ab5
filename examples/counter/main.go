// Command counter is a counter in one process's memory that other
// processes add to with FADD, a one-sided atomic: the owner's CPU takes no
// part. The owner hands its segment and JFR to each client in a bootstrap
// bundle over TCP, and prints the counter once its clients are done.
//
//	go run ./examples/counter serve -clients 2 -addr 127.0.0.1:7470
//	go run ./examples/counter add -n 1000 -addr 127.0.0.1:7470   # twice
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

func main() {
	log.SetFlags(0)
	log.SetPrefix("counter: ")
	if len(os.Args) < 2 || (os.Args[1] != "serve" && os.Args[1] != "add") {
		log.Print("usage: counter serve [-clients N] [-addr A] | counter add [-n N] [-addr A]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:7470", "the owner's TCP address for the bootstrap")
	clients := fs.Int("clients", 2, "serve: clients to wait for")
	n := fs.Int("n", 1000, "add: how many FADDs of 1")
	_ = fs.Parse(os.Args[2:])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dev := must(urma.DeviceByName("loopback0"))
	uctx := must(urma.Open(dev, 0, nil))
	defer uctx.Close()
	if os.Args[1] == "serve" {
		serve(ctx, uctx, *addr, *clients)
	} else {
		add(ctx, uctx, *addr, *n)
	}
}

// serve owns the counter: an 8-byte segment that peers may use atomically.
func serve(ctx context.Context, uctx *urma.Context, addr string, clients int) {
	const token = 0x600d
	counter, err := segment.Alloc(uctx, 8, segment.Config{Access: segment.Read | segment.Write | segment.Atomic,
		TokenPolicy: segment.TokenPlainText, Token: token})
	check(err)
	jfc := must(jetty.NewJFC(uctx, jetty.JFCConfig{Depth: 16}))
	jfr, err := jetty.NewJFR(uctx, jetty.JFRConfig{Depth: 16, JFC: jfc, TokenPolicy: segment.TokenPlainText, Token: token})
	check(err) // one-sided requests in RM mode name a JFR of the owner
	var b bootstrap.Bundle
	b.AddSegment("counter", counter, token)
	b.AddJFR("owner", jfr, token)

	l := must(net.Listen("tcp", addr))
	defer l.Close()
	fmt.Printf("serving on %s for %d clients\n", l.Addr(), clients)
	conns := make([]net.Conn, clients)
	for i := range conns {
		conns[i], err = l.Accept()
		check(err)
		defer conns[i].Close()
	}
	for _, conn := range conns { // all clients start adding at once
		check(bootstrap.Write(ctx, conn, &b))
	}
	for _, conn := range conns {
		var done [1]byte
		if _, err := conn.Read(done[:]); err != nil { // done, or hung up
			log.Printf("a client left without saying done: %v", err)
		}
	}
	fmt.Printf("counter = %d\n", must(counter.Uint64(0)).Load())
}

// add adds 1 to the owner's counter n times, each FADD returning the old
// value, and tells the owner it is done.
func add(ctx context.Context, uctx *urma.Context, addr string, n int) {
	conn := must(net.Dial("tcp", addr))
	defer conn.Close()
	b := must(bootstrap.Read(ctx, conn))
	counter := must(b.ImportSegment(ctx, uctx, "counter"))
	owner := must(b.Import(ctx, uctx, "owner"))
	jfc := must(jetty.NewJFC(uctx, jetty.JFCConfig{Depth: 16}))
	jfs := must(jetty.NewJFS(uctx, jetty.JFSConfig{Depth: 16, JFC: jfc}))
	old := must(segment.Alloc(uctx, 8, segment.Config{Access: segment.LocalOnly}))
	oldWord := must(old.Uint64(0))
	crs := make([]jetty.CR, 1)
	var last uint64
	for i := range n {
		check(jfs.FetchAdd(owner, counter.SGE(0, 8), old.SGE(0, 8), 1, 0, uint64(i)))
		must(jfc.PollWait(ctx, crs, 0))
		check(crs[0].Err())
		last = oldWord.Load() // the counter before this add
	}
	fmt.Printf("added %d; the counter was %d before the last add\n", n, last)
	_ = must(conn.Write([]byte{1}))
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
