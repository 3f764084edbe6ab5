package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/test/vm"
)

// TestRpingInterop runs krping's rping mode against rdma-core's own rping
// (Debian rdmacm-utils) on the guest's Soft-RoCE and soft-iWARP devices,
// each side validating (-V, validate): rping -s against our client, and
// rping -c against our server. rping speaks plain rdma_cm and verbs, so
// this is our wire behaviour checked by someone else's program.
func TestRpingInterop(t *testing.T) {
	env := vm.Require(t)
	rping, err := exec.LookPath("rping")
	require.NoError(t, err, "the guest has rdmacm-utils")
	bin := extest.Build(t)
	const count, size = 20, 100
	for i, d := range []vm.Device{env.RXE, env.SIW} {
		addr := d.Addr.String()
		t.Run(d.Name+"/rping-server", func(t *testing.T) {
			port := strconv.Itoa(17174 + 2*i)
			srv := extest.Start(t, "rping -s", rping, "-s", "-V", "-v", "-a", addr, "-p", port, "-S", strconv.Itoa(size))
			awaitListener(t, addr, port)
			cli := extest.Start(t, "krping client", bin, "-provider", "ib", "-dev", d.Name,
				fmt.Sprintf("client,rping,addr=%s,port=%s,count=%d,size=%d,validate,verbose", addr, port, count, size))
			out, err := cli.Wait(2 * time.Minute)
			require.NoError(t, err, "krping:\n%s\nrping -s:\n%s", out, srv.Output())
			sout, err := srv.Wait(time.Minute)
			require.NoError(t, err, "rping -s:\n%s\nkrping:\n%s", sout, out)
			// Every ping came back whole: krping validated it, and printed
			// what rping wrote back, which is what rping read from us.
			pings := regexp.MustCompile(`(?m)^ping data: rdma-ping-\d+: [A-z]+$`).FindAllString(out, -1)
			assert.Len(t, pings, count, out)
			assert.Len(t, regexp.MustCompile(`(?m)^server ping data: rdma-ping-\d+: `).FindAllString(sout, -1), count, sout)
			for n := range count {
				assert.Contains(t, out, "ping data: "+string(pingString(n, size))+"\n")
			}
			// count SENDs of 16 bytes each way per ping, no one-sided work
			// from the client.
			assert.Contains(t, out, fmt.Sprintf("1-%s %d %d %d %d 0 0 0 0\n", d.Name, 2*count*adSize, 2*count, 2*count*adSize, 2*count))
		})
		t.Run(d.Name+"/rping-client", func(t *testing.T) {
			port := strconv.Itoa(17175 + 2*i)
			srv := extest.Start(t, "krping server", bin, "-provider", "ib", "-dev", d.Name,
				fmt.Sprintf("server,rping,addr=%s,port=%s,size=%d,verbose", addr, port, size))
			srv.Await(regexp.MustCompile(`listening on `+regexp.QuoteMeta(addr)+`:`+port), time.Minute)
			cli := extest.Start(t, "rping -c", rping, "-c", "-V", "-v", "-a", addr, "-p", port, "-S", strconv.Itoa(size), "-C", strconv.Itoa(count))
			out, err := cli.Wait(2 * time.Minute)
			require.NoError(t, err, "rping -c:\n%s\nkrping:\n%s", out, srv.Output())
			sout, err := srv.Wait(time.Minute)
			require.NoError(t, err, "krping:\n%s\nrping -c:\n%s", sout, out)
			// rping -V compared every ping (it exits non-zero on a
			// mismatch); -v printed what came back.
			for n := range count {
				assert.Contains(t, out, "ping data: "+string(pingString(n, size))+"\n")
			}
			assert.NotContains(t, out, "mismatch")
			assert.Len(t, regexp.MustCompile(`(?m)^server ping data \(64B max\): \|rdma-ping-`).FindAllString(sout, -1), count, sout)
			// The server READ and WROTE count pings of size bytes.
			assert.Contains(t, sout, fmt.Sprintf("1-%s %d %d %d %d %d %d %d %d\n", d.Name,
				2*count*adSize, 2*count, 2*count*adSize, 2*count, count*size, count, count*size, count))
		})
		t.Run(d.Name+"/one-process", func(t *testing.T) {
			p := extest.Start(t, "krping", bin, "-provider", "ib", "-dev", d.Name, fmt.Sprintf("rping,addr=%s,count=%d,size=%d,validate", addr, count, size))
			out, err := p.Wait(2 * time.Minute)
			require.NoError(t, err, out)
			assert.Contains(t, out, fmt.Sprintf("2-%s %d %d %d %d 0 0 0 0\n", d.Name, 2*count*adSize, 2*count, 2*count*adSize, 2*count))
			assert.Contains(t, out, fmt.Sprintf("1-%s %d %d %d %d %d %d %d %d\n", d.Name,
				2*count*adSize, 2*count, 2*count*adSize, 2*count, count*size, count, count*size, count))
		})
	}
}

// TestRpingCatchesCorruption checks that the interop test can fail: our
// server, run in this process, changes one byte of ping 3 before writing
// it back, and rping -c -V reports the mismatch and exits non-zero.
func TestRpingCatchesCorruption(t *testing.T) {
	env := vm.Require(t)
	rping, err := exec.LookPath("rping")
	require.NoError(t, err, "the guest has rdmacm-utils")
	d := env.RXE
	tamper = func(ping int, data []byte) {
		if ping == 3 {
			data[20] ^= 0x20
		}
	}
	defer func() { tamper = nil }()
	o, err := parseOptions(fmt.Sprintf("server,rping,addr=%s,port=17190,size=64", d.Addr))
	require.NoError(t, err)
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		done <- rpingServe(ctx, exutil.LockedWriter(&out), config{provider: "ib", dev: d.Name, eid: -1, opts: o}, ready, 1)
	}()
	addr := <-ready
	host, port, _ := strings.Cut(addr, ":")
	cli := extest.Start(t, "rping -c", rping, "-c", "-V", "-a", host, "-p", port, "-S", "64", "-C", "10")
	cout, err := cli.Wait(time.Minute)
	require.Error(t, err, "rping -c -V accepted corrupted data:\n%s", cout)
	assert.Contains(t, cout, "data mismatch")
	// Our server sees the client leave after ping 3.
	require.NoError(t, <-done, out.String())
	assert.Contains(t, out.String(), fmt.Sprintf("1-%s %d 8 %d 8 256 4 256 4\n", d.Name, 8*adSize, 8*adSize))
}

// pingString is rping's ping n of size bytes, without its zero last byte.
func pingString(n, size int) []byte {
	b := make([]byte, size)
	start := byte('A')
	for i := range n {
		start = fillPing(b, i, start)
	}
	fillPing(b, n, start)
	return b[:size-1]
}

// awaitListener waits until an rdma_cm id listens on addr:port (rping -s
// prints nothing before a client connects).
func awaitListener(t *testing.T, addr, port string) {
	t.Helper()
	want := "src-addr " + addr + ":" + port + " "
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out, err := exec.CommandContext(ctx, "rdma", "resource", "show", "cm_id").CombinedOutput()
		cancel()
		require.NoError(t, err, "%s", out)
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "state LISTEN") && strings.Contains(line, want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s:%s after 30s:\n%s", addr, port, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
