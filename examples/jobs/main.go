// Command jobs runs each job of an RDMA library's repertoire over URMA,
// between a server and a client: receive, send, send with immediate data,
// write, write with immediate data, read, compare-and-swap and
// fetch-and-add. One flag per job (none: every job, in that order); each
// is named with its result as the client sees it and as the server saw
// it. Both sides run in one process unless -server or -client is given.
// With -um the message jobs travel as UM datagrams.
//
//	go run ./examples/jobs                                  # every job, one process
//	go run ./examples/jobs -server -addr 127.0.0.1:7472      # terminal 1
//	go run ./examples/jobs -client -addr 127.0.0.1:7472 -cas -fadd   # terminal 2
//	go run -tags urma_verbs ./examples/jobs -provider ib -dev rxe0
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/urma-go/sdk/examples/internal/exutil"
)

// A job is one kind of work request, as the client posts it.
type job struct {
	flag, name, help string
}

// jobs are every job, in the order a run takes them.
var jobs = []job{
	{"recv", "receive", "post a receive and take the server's SEND"},
	{"send", "send", "SEND a message into a receive the server posted"},
	{"send-imm", "send with immediate", "SEND with 32 bits of immediate data"},
	{"write", "write", "WRITE into the server's segment"},
	{"write-imm", "write with immediate", "WRITE with immediate data, which takes one of the server's receives"},
	{"read", "read", "READ from the server's segment"},
	{"cas", "compare and swap", "compare the server's word with 0 and swap in 42"},
	{"fadd", "fetch and add", "add 8 to the server's word"},
}

// config is the command line.
type config struct {
	exutil.Common
	jobs []string // flags of the jobs to run, in order
	// um runs the two-sided jobs as UM datagrams: no connection, no
	// delivery guarantee, no one-sided requests.
	um bool
}

// twoSided tells whether a job is a message (a SEND and the receive it
// takes), the only kind UM carries.
func twoSided(flag string) bool { return flag == "recv" || flag == "send" || flag == "send-imm" }

func main() {
	var cfg config
	fs := flag.NewFlagSet("jobs", flag.ExitOnError)
	cfg.Register(fs, "127.0.0.1:7472")
	chosen := make([]*bool, len(jobs))
	for i, j := range jobs {
		chosen[i] = fs.Bool(j.flag, false, "run the "+j.name+" job: "+j.help)
	}
	fs.BoolVar(&cfg.um, "um", false, "run the message jobs (receive, send, send with immediate) as UM datagrams")
	_ = fs.Parse(os.Args[1:])
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "jobs:", err)
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "jobs: unexpected argument %q (the jobs are flags: -recv -send ...)\n", fs.Arg(0))
		os.Exit(2)
	}
	for i, j := range jobs {
		if *chosen[i] {
			if cfg.um && !twoSided(j.flag) {
				fmt.Fprintf(os.Stderr, "jobs: -%s with -um: UM carries messages only (receive, send, send with immediate)\n", j.flag)
				os.Exit(2)
			}
			cfg.jobs = append(cfg.jobs, j.flag)
		}
	}
	ctx, stop := exutil.Interruptible()
	defer stop()
	err := run(ctx, os.Stdout, cfg)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Println("jobs: interrupted")
		stop()
		os.Exit(exutil.ExitInterrupted)
	case err != nil:
		fmt.Fprintln(os.Stderr, "jobs:", err)
		os.Exit(1)
	}
}

// run runs the server, the client or both, as cfg says, writing what each
// job did to w.
func run(ctx context.Context, w io.Writer, cfg config) error {
	if len(cfg.jobs) == 0 {
		for _, j := range jobs {
			if !cfg.um || twoSided(j.flag) {
				cfg.jobs = append(cfg.jobs, j.flag)
			}
		}
	}
	w = exutil.LockedWriter(w)
	switch {
	case cfg.Server:
		return serveOn(ctx, w, cfg, cfg.Addr)
	case cfg.Client:
		return runClient(ctx, w, cfg, cfg.Addr)
	}
	return both(ctx, w, cfg)
}
