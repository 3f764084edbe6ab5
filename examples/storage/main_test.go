package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
	"github.com/urma-go/sdk/examples/internal/exutil"
)

func testConfig(size, count int) config {
	c := config{Common: exutil.Common{Dev: "loopback0", EID: -1, Mode: "poll"}, chunks: 256, count: count, size: size,
		readPct: 50, keys: 8}
	return c
}

func runConfig(t *testing.T, c config) string {
	t.Helper()
	var b bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, run(ctx, &b, c), b.String())
	return b.String()
}

var clientLine = regexp.MustCompile(`storage: client: (\d+) writes, (\d+) reads \((\d+) inline, (\d+) by RDMA\) of (\d+) bytes, all reads verified`)

// TestOneProcess runs the load with both ends here: inline payloads, one
// chunk by RDMA, several chunks, the largest Size, in both completion
// modes, and checks that every request took the path its size says.
func TestOneProcess(t *testing.T) {
	for _, tc := range []struct {
		size   int
		mode   string
		inline bool
	}{{1, "poll", true}, {1024, "event", true}, {1025, "poll", false}, {4048, "poll", false},
		{4049, "event", false}, {maxPayload, "poll", false}} {
		c := testConfig(tc.size, 60)
		c.Mode = tc.mode
		out := runConfig(t, c)
		m := clientLine.FindStringSubmatch(out)
		require.NotNil(t, m, out)
		if tc.inline {
			assert.Equal(t, "60", m[3], "inline requests of %d bytes\n%s", tc.size, out)
		} else {
			assert.Equal(t, "60", m[4], "RDMA requests of %d bytes\n%s", tc.size, out)
		}
		assert.Regexp(t, `storage: server: \d+ writes, \d+ reads \(\d+ inline, \d+ by RDMA\), 0 refused`, out)
	}
}

// TestCorruptedWriteRefused sends a write whose data goes bad on the way,
// inline (wrong tail CRC) and by RDMA (a chunk whose data no longer
// matches its CRC32 on the wire): the server refuses it and stores
// nothing.
func TestCorruptedWriteRefused(t *testing.T) {
	for _, size := range []int{100, 3 * 4048} {
		c := testConfig(size, 10)
		c.corrupt = true
		out := runConfig(t, c)
		assert.Regexp(t, `storage: corrupted \d+-byte write refused \(corrupted\), nothing stored`, out)
		assert.Regexp(t, `storage: server: \d+ writes, \d+ reads .*, 2 refused`, out, "the write and the read of what it did not store")
	}
}

// TestDamagedChunkNotServed flips a byte of a stored chunk after the write,
// as failing media would: the store's view checks the CRC on the WRITE
// back to the client and the read is refused as corrupted.
func TestDamagedChunkNotServed(t *testing.T) {
	stored = func(s *store, id uint64) {
		if id == 7 {
			s.chunk(s.index[id].chunks[1])[100] ^= 0x04
		}
	}
	defer func() { stored = nil }()
	c := testConfig(0, 0)
	var b bytes.Buffer
	err := runWork(t, &b, c, func(ctx context.Context, w io.Writer, cl *client, c config) error {
		data := bytes.Repeat([]byte("urma"), 3000)
		for _, id := range []uint64{6, 7} {
			if err := cl.write(ctx, id, data); err != nil {
				return err
			}
		}
		got, err := cl.read(ctx, 6, len(data))
		if err != nil || !bytes.Equal(got, data) {
			return errors.Join(errors.New("the undamaged object does not read back"), err)
		}
		_, err = cl.read(ctx, 7, len(data))
		var se *statusError
		if !errors.As(err, &se) || se.status != statusCorrupted {
			return errors.Join(errors.New("the damaged object was served"), err)
		}
		return nil
	})
	require.NoError(t, err, b.String())
}

// runWork runs a server here and a client that does work.
func runWork(t *testing.T, w io.Writer, c config, work func(context.Context, io.Writer, *client, config) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := extest.FreeAddr(t)
	c.Addr = addr
	sc := c
	sc.Server = true
	srv := make(chan error, 1)
	go func() { srv <- serve(ctx, io.Discard, sc, nil) }()
	c.Client, c.EID = true, 1
	return errors.Join(dial(ctx, w, c, work), <-srv)
}

// TestProcesses runs the server and the client as two programs.
func TestProcesses(t *testing.T) {
	bin := extest.Build(t)
	addr := extest.FreeAddr(t)
	srv := extest.Start(t, "server", bin, "-server", "-addr", addr, "-chunks", "512")
	srv.Await(regexp.MustCompile(`listening on `+regexp.QuoteMeta(addr)), 30*time.Second)
	cli := extest.Start(t, "client", bin, "-client", "-addr", addr, "-count", "200", "-size", "20000", "-corrupt", "-mode", "event")
	out, err := cli.Wait(time.Minute)
	require.NoError(t, err, out)
	assert.Contains(t, out, "storage: corrupted 20000-byte write refused (corrupted), nothing stored")
	assert.Regexp(t, clientLine, out)
	assert.Regexp(t, `storage: \d+ IOPS, [\d.]+ MB/s, average latency [\d.]+ us`, out)
	sout, err := srv.Wait(30 * time.Second)
	require.NoError(t, err, sout)
	assert.Regexp(t, `storage: server: \d+ writes, \d+ reads \(0 inline, \d+ by RDMA\), 2 refused`, sout)
}

func TestInterruptAndBadFlags(t *testing.T) {
	bin := extest.Build(t)
	addr := extest.FreeAddr(t)
	srv := extest.Start(t, "server", bin, "-server", "-addr", addr)
	srv.Await(regexp.MustCompile(`listening`), 30*time.Second)
	require.NoError(t, srv.Interrupt())
	out, err := srv.Wait(10 * time.Second)
	assert.Equal(t, 130, extest.ExitCode(t, err), out)
	assert.Contains(t, out, "storage: interrupted\n")

	for _, args := range [][]string{{"-size", "0"}, {"-size", "65536"}, {"-read-pct", "101"}, {"-mode", "x"},
		{"-server", "-client"}, {"-chunks", "0"}} {
		p := extest.Start(t, "storage", bin, args...)
		out, err := p.Wait(10 * time.Second)
		assert.Equal(t, 2, extest.ExitCode(t, err), "%v: %s", args, out)
	}
}

// A client whose server dies notices at once, not after its 30 s wait for
// a response, and names the server.
func TestServerKilled(t *testing.T) {
	bin := extest.Build(t)
	for _, args := range [][]string{{"-size", "500"}, {"-size", "20000", "-mode", "event"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			addr := extest.FreeAddr(t)
			srv := extest.Start(t, "server", bin, "-server", "-addr", addr)
			srv.Await(regexp.MustCompile(`listening on `+regexp.QuoteMeta(addr)), 30*time.Second)
			cli := extest.Start(t, "client", bin, append([]string{"-client", "-addr", addr, "-count", "1000000000"}, args...)...)
			cli.Await(regexp.MustCompile(`connected to `+regexp.QuoteMeta(addr)), 30*time.Second)
			time.Sleep(300 * time.Millisecond) // requests are under way
			require.NoError(t, srv.Signal(syscall.SIGKILL))
			killed := time.Now()
			out, err := cli.Wait(time.Minute)
			assert.Less(t, time.Since(killed), 5*time.Second, "the client noticed late:\n%s", out)
			assert.Equal(t, 1, extest.ExitCode(t, err), out)
			assert.Regexp(t, `(?m)^storage: the server at `+regexp.QuoteMeta(addr)+` went away`, out)
		})
	}
}
