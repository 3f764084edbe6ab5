// Command quickstart is the README's two-process quickstart. The server
// exposes a segment and a JFR and prints what a client needs to reach
// them; the client WRITEs into the segment and SENDs a message to the JFR.
//
//	go run ./examples/quickstart serve         # terminal 1: prints the client's command
//	go run ./examples/quickstart dial HEX      # terminal 2: the line the server printed
package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/loopback" // registers device loopback0
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

const segToken, jfrToken = 0xc0ffee, 0x5eed // secrets a peer must present (use random ones)

func main() {
	log.SetFlags(0)
	if len(os.Args) < 2 || (os.Args[1] == "dial") != (len(os.Args) == 3) {
		log.Print("usage: quickstart serve | quickstart dial HEX")
		os.Exit(2)
	}
	dev, err := urma.DeviceByName("loopback0")
	check(err)
	uctx, err := urma.Open(dev, 0, nil)
	check(err)
	defer uctx.Close() // closes whatever is left, children first

	// A JFC takes the records of the queues attached to it: at least the
	// sum of their depths (16 each here).
	jfc, err := jetty.NewJFC(uctx, jetty.JFCConfig{Depth: 32})
	check(err)
	if os.Args[1] == "serve" {
		serve(uctx, jfc)
	} else {
		dial(uctx, jfc, os.Args[2])
	}
}

func serve(uctx *urma.Context, jfc *jetty.JFC) {
	mem, err := segment.Alloc(uctx, 4096, segment.Config{Access: segment.Read | segment.Write,
		TokenPolicy: segment.TokenPlainText, Token: segToken})
	check(err)
	jfr, err := jetty.NewJFR(uctx, jetty.JFRConfig{Depth: 16, JFC: jfc,
		TokenPolicy: segment.TokenPlainText, Token: jfrToken})
	check(err)
	inbox, err := segment.Alloc(uctx, 256, segment.Config{Access: segment.LocalOnly})
	check(err)
	check(jfr.Recv(inbox.SGE(0, 256), 0))

	// What the client needs, descriptors and tokens, in one bundle of
	// bytes: hand it over any way you like (here, a command line).
	var b bootstrap.Bundle
	b.AddSegment("mem", mem, segToken)
	b.AddJFR("inbox", jfr, jfrToken)
	wire, err := b.MarshalBinary()
	check(err)
	fmt.Printf("go run ./examples/quickstart dial %x\n", wire)

	cr := next(jfc, 5*time.Minute) // the client's SEND
	fmt.Printf("segment holds %q\n", mem.Bytes()[:cr.Imm])
	fmt.Printf("received %q\n", inbox.Bytes()[:cr.Len])
}

func dial(uctx *urma.Context, jfc *jetty.JFC, arg string) {
	wire, err := hex.DecodeString(arg)
	check(err)
	var b bootstrap.Bundle
	check(b.UnmarshalBinary(wire))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // imports may ask the owner
	defer cancel()
	target, err := b.ImportSegment(ctx, uctx, "mem") // with the token the bundle carries
	check(err)
	server, err := b.Import(ctx, uctx, "inbox")
	check(err)
	jfs, err := jetty.NewJFS(uctx, jetty.JFSConfig{Depth: 16, JFC: jfc})
	check(err)

	local, err := segment.Alloc(uctx, 256, segment.Config{Access: segment.LocalOnly})
	check(err)
	n := copy(local.Bytes(), "written by the client's WRITE")
	check(jfs.Write(server, target.SGE(0, uint32(n)), local.SGE(0, uint32(n)), 0, 1))
	next(jfc, 10*time.Second) // one-sided: the server's CPU took no part

	m := copy(local.Bytes()[128:], "hello from the client")
	check(jfs.SendImm(server, local.SGE(128, uint32(m)), uint64(n), 0, 2)) // imm: the WRITE's length
	next(jfc, 10*time.Second)
	fmt.Println("client: WRITE and SEND completed")
}

// next waits for one completion record and fails on an error status.
func next(jfc *jetty.JFC, limit time.Duration) jetty.CR {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	crs := make([]jetty.CR, 1)
	_, err := jfc.PollWait(ctx, crs, 0)
	check(err)
	check(crs[0].Err())
	return crs[0]
}

func check(err error) {
	if err != nil {
		log.Fatal("quickstart: ", err)
	}
}
