// Command krping is krping / rping in URMA terms: a client advertises a
// source buffer, the server READs it and says "go ahead", the client
// advertises a sink, the server WRITEs the data back and says "go ahead",
// and the client validates it. The wlat, rlat and bw variants time WRITE
// ping-pong, READ latency and WRITE bandwidth.
//
//	krping server,addr=127.0.0.1,port=9999
//	krping client,addr=127.0.0.1,port=9999,count=100,size=64,validate,verbose
//	krping count=1000,validate            # both ends in one process
//
// With the rping option it talks to rdma-core's rping over plain rdma_cm
// (ib provider only):
//
//	krping -provider ib -dev rxe0 client,rping,addr=169.254.77.1,size=100,validate
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/urma-go/sdk/examples/internal/exutil"
)

func main() {
	fs := flag.NewFlagSet("krping", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.provider, "provider", "", "provider name (default: any provider that has -dev)")
	fs.StringVar(&c.dev, "dev", "loopback0", "device name")
	fs.IntVar(&c.eid, "eid", -1, "EID index of this end (default: the EID equal to addr=, else 0; the client of a one-process run takes 1)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: krping [-provider P] [-dev D] [-eid N] option[,option...]\n"+
			"options: server client addr=IP port=N count=N size=N verbose validate wlat rlat bw duplex txdepth=N poll rping test=NAME\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	var err error
	if c.opts, err = parseOptions(strings.Join(fs.Args(), ",")); err != nil {
		fmt.Fprintln(os.Stderr, "krping:", err)
		os.Exit(2)
	}
	ctx, stop := exutil.Interruptible()
	defer stop()
	err = run(ctx, os.Stdout, c)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Println("krping: interrupted")
		stop()
		os.Exit(exutil.ExitInterrupted)
	case err != nil:
		fmt.Fprintln(os.Stderr, "krping:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	provider, dev string
	eid           int
	opts          options
}

var errHangup = errors.New("the client hung up")

// hungUp reports that err is the end of a server loop because its client
// said goodbye or went away.
func hungUp(ctx context.Context, err error) bool {
	return errors.Is(err, context.Canceled) && errors.Is(context.Cause(ctx), errHangup)
}
