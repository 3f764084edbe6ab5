package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
	"github.com/urma-go/sdk/urma"
)

func runString(t *testing.T, opts string) (string, error) {
	t.Helper()
	o, err := parseOptions(opts)
	require.NoError(t, err)
	var b bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = run(ctx, &b, config{dev: "loopback0", eid: -1, opts: o})
	return b.String(), err
}

// statsLine matches krping's stats line for thread n and captures the
// eight counters.
func statsLine(n int) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`(?m)^%d-loopback0 (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)$`, n))
}

// TestPingOneProcess runs the ping loop with both ends in this process and
// checks krping's counters: per ping, the client SENDs two 16-byte
// advertisements and receives two "go ahead"s; the server receives two,
// sends two, READs once and WRITEs once.
func TestPingOneProcess(t *testing.T) {
	for _, mode := range []string{"", ",poll"} {
		out, err := runString(t, "count=20,size=100,validate"+mode)
		require.NoError(t, err, out)
		assert.Regexp(t, `krping: server on loopback/loopback0 eid ::ffff:127.0.0.1, listening on 127.0.0.1:\d+`, out)
		assert.Regexp(t, `krping: client on loopback/loopback0 eid ::ffff:127.0.0.2, connected to 127.0.0.1:\d+: ping test, count 20, size 100, (event|poll) mode`, out)
		assert.Equal(t, []string{"640", "40", "640", "40", "2000", "20", "2000", "20"}, statsLine(1).FindStringSubmatch(out)[1:], out)
		assert.Equal(t, []string{"640", "40", "640", "40", "0", "0", "0", "0"}, statsLine(2).FindStringSubmatch(out)[1:], out)
	}
}

func TestVerbose(t *testing.T) {
	out, err := runString(t, "count=2,size=40,verbose")
	require.NoError(t, err, out)
	assert.Contains(t, out, "server ping data (64B max): |rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ|\n")
	assert.Contains(t, out, "ping data: rdma-ping-1: BCDEFGHIJKLMNOPQRSTUVWXYZ[\n")
}

// TestValidateCatchesCorruption flips one byte of the data the server
// writes back; the client's validate must stop the run and say where.
func TestValidateCatchesCorruption(t *testing.T) {
	tamper = func(ping int, data []byte) {
		if ping == 3 {
			data[20] ^= 0x01
		}
	}
	defer func() { tamper = nil }()
	out, err := runString(t, "count=10,validate")
	require.Error(t, err, out)
	assert.ErrorContains(t, err, "ping 3: data mismatch at byte 20 of 64")

	// Without validate the corruption goes unnoticed, as in krping.
	out, err = runString(t, "count=10")
	require.NoError(t, err, out)
}

func TestVariants(t *testing.T) {
	delta := regexp.MustCompile(`(?m)^delta nsec (\d+) iter 50 size 256$`)
	for _, tc := range []struct {
		opts   string
		deltas int
		srv    []string // server counters
		cli    []string
	}{
		{"count=50,size=256,wlat", 2, []string{"16", "1", "16", "1", "12800", "50", "0", "0"}, []string{"16", "1", "16", "1", "12800", "50", "0", "0"}},
		{"count=50,size=256,rlat", 1, []string{"16", "1", "16", "1", "0", "0", "0", "0"}, []string{"16", "1", "16", "1", "0", "0", "12800", "50"}},
		{"count=50,size=256,rlat,poll", 1, []string{"16", "1", "16", "1", "0", "0", "0", "0"}, []string{"16", "1", "16", "1", "0", "0", "12800", "50"}},
		{"count=50,size=256,bw,txdepth=8", 1, []string{"16", "1", "16", "1", "0", "0", "0", "0"}, []string{"16", "1", "16", "1", "12800", "50", "0", "0"}},
		{"count=50,size=256,bw,duplex", 2, []string{"16", "1", "16", "1", "12800", "50", "0", "0"}, []string{"16", "1", "16", "1", "12800", "50", "0", "0"}},
	} {
		t.Run(tc.opts, func(t *testing.T) {
			out, err := runString(t, tc.opts)
			require.NoError(t, err, out)
			assert.Len(t, delta.FindAllString(out, -1), tc.deltas, out)
			assert.Equal(t, tc.srv, statsLine(1).FindStringSubmatch(out)[1:], out)
			assert.Equal(t, tc.cli, statsLine(2).FindStringSubmatch(out)[1:], out)
		})
	}
	_, err := runString(t, "rlat")
	assert.ErrorContains(t, err, "the rlat test needs count=N")
}

// TestProcesses runs the server and the client as separate programs, as a
// user would in two terminals.
func TestProcesses(t *testing.T) {
	bin := extest.Build(t)
	for _, test := range []string{"count=30,validate", "count=30,rlat", "count=30,wlat,poll", "count=30,bw,size=4096"} {
		t.Run(test, func(t *testing.T) {
			port := strings.Split(extest.FreeAddr(t), ":")[1]
			srv := extest.Start(t, "server", bin, "server,addr=127.0.0.1,port="+port)
			srv.Await(regexp.MustCompile(`listening on 127\.0\.0\.1:`+port), 30*time.Second)
			cli := extest.Start(t, "client", bin, "client,addr=127.0.0.1,port="+port+","+test)
			out, err := cli.Wait(time.Minute)
			require.NoError(t, err, out)
			assert.Regexp(t, `(?m)^1-loopback0 \d+ \d+ \d+ \d+ \d+ \d+ \d+ \d+$`, out)
			sout, err := srv.Wait(30 * time.Second)
			require.NoError(t, err, sout)
			assert.Regexp(t, `(?m)^1-loopback0 \d+ \d+ \d+ \d+ \d+ \d+ \d+ \d+$`, sout)
			if test == "count=30,validate" {
				assert.Contains(t, sout, "1-loopback0 960 60 960 60 1920 30 1920 30\n")
				assert.Contains(t, out, "1-loopback0 960 60 960 60 0 0 0 0\n")
			}
		})
	}
}

// TestSeedSpelling runs the two commands of krping's own documentation,
// test=rping and all, as two programs.
func TestSeedSpelling(t *testing.T) {
	bin := extest.Build(t)
	port := strings.Split(extest.FreeAddr(t), ":")[1]
	srv := extest.Start(t, "server", bin, "server,test=rping,addr=127.0.0.1,port="+port)
	srv.Await(regexp.MustCompile(`listening on 127\.0\.0\.1:`+port), 30*time.Second)
	cli := extest.Start(t, "client", bin, "client,test=rping,addr=127.0.0.1,port="+port+",count=100")
	out, err := cli.Wait(time.Minute)
	require.NoError(t, err, out)
	assert.Contains(t, out, "ping test, count 100")
	sout, err := srv.Wait(30 * time.Second)
	require.NoError(t, err, sout)
	assert.Regexp(t, `(?m)^1-loopback0 \d+ 200 \d+ 200 \d+ 100 \d+ 100$`, sout, "the server's two SENDs, RECVs, one WRITE and READ per ping")
}

// TestInterrupt stops a waiting server and a running client with Ctrl-C:
// each frees its resources, says so and exits 130; the server of an
// interrupted client ends normally.
func TestInterrupt(t *testing.T) {
	bin := extest.Build(t)
	port := strings.Split(extest.FreeAddr(t), ":")[1]
	srv := extest.Start(t, "server", bin, "server,addr=127.0.0.1,port="+port)
	srv.Await(regexp.MustCompile(`listening`), 30*time.Second)
	require.NoError(t, srv.Interrupt())
	out, err := srv.Wait(10 * time.Second)
	assert.Equal(t, 130, extest.ExitCode(t, err), out)
	assert.Contains(t, out, "krping: interrupted\n")

	port = strings.Split(extest.FreeAddr(t), ":")[1]
	srv = extest.Start(t, "server", bin, "server,addr=127.0.0.1,port="+port)
	srv.Await(regexp.MustCompile(`listening`), 30*time.Second)
	cli := extest.Start(t, "client", bin, "client,addr=127.0.0.1,port="+port+",validate") // count=0: forever
	cli.Await(regexp.MustCompile(`connected`), 30*time.Second)
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, cli.Interrupt())
	out, err = cli.Wait(10 * time.Second)
	assert.Equal(t, 130, extest.ExitCode(t, err), out)
	assert.Contains(t, out, "krping: interrupted\n")
	sout, err := srv.Wait(10 * time.Second)
	require.NoError(t, err, sout)
	assert.Regexp(t, `(?m)^1-loopback0 \d+ \d+ \d+ \d+ [1-9]\d* [1-9]\d* [1-9]\d* [1-9]\d*$`, sout)
}

func TestBadOptions(t *testing.T) {
	bin := extest.Build(t)
	for _, args := range [][]string{{"server,client"}, {"size=0"}, {"frob"}, {"-nope"}, {"wlat,size=3"}, {"client,wlat,size=1"}} {
		p := extest.Start(t, "krping", bin, args...)
		out, err := p.Wait(10 * time.Second)
		assert.Equal(t, 2, extest.ExitCode(t, err), "%v: %s", args, out)
	}
}

// TestRpingNeedsVerbs: the rping mode needs rdma_cm, which the loopback
// provider has not; every mode says so instead of hanging.
func TestRpingNeedsVerbs(t *testing.T) {
	for _, opts := range []string{"rping,count=1", "server,rping", "client,rping,count=1"} {
		out, err := runString(t, opts)
		require.ErrorIs(t, err, urma.ErrNotSupported, "%s: %s", opts, out)
		assert.ErrorContains(t, err, "has no rdma_cm", opts)
	}
}

// A client whose server dies says so at once and names the server, with
// the status of the request that failed with it when one did, not the
// state its Jetty was left in ("jetty is ERROR").
func TestServerKilled(t *testing.T) {
	bin := extest.Build(t)
	for _, test := range []string{"validate", "bw,size=4096", "rlat,poll"} {
		t.Run(test, func(t *testing.T) {
			port := strings.Split(extest.FreeAddr(t), ":")[1]
			srv := extest.Start(t, "server", bin, "server,addr=127.0.0.1,port="+port)
			srv.Await(regexp.MustCompile(`listening on 127\.0\.0\.1:`+port), 30*time.Second)
			cli := extest.Start(t, "client", bin, "client,addr=127.0.0.1,port="+port+",count=2000000000,"+test)
			cli.Await(regexp.MustCompile(`connected`), 30*time.Second)
			time.Sleep(300 * time.Millisecond) // the loop is under way
			require.NoError(t, srv.Signal(syscall.SIGKILL))
			killed := time.Now()
			out, err := cli.Wait(20 * time.Second)
			assert.Less(t, time.Since(killed), 5*time.Second, "the client noticed late:\n%s", out)
			assert.Equal(t, 1, extest.ExitCode(t, err), out)
			assert.Regexp(t, `(?m)^krping: the server at 127\.0\.0\.1:`+port+` went away(: urma: [A-Z]+ completed with [A-Z_]+ \(ctx 0x[0-9a-f]+\))?$`, out)
			assert.NotContains(t, out, "wrong state")
		})
	}
}
