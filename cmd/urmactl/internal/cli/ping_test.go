package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/cmd/urmactl/internal/cli"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
)

// pingOpts are the options of a quick run against target.
func pingOpts(target string, count int) cli.PingOptions {
	return cli.PingOptions{Target: target, Device: loopback.DeviceName, Count: count, Interval: 10 * time.Millisecond,
		Timeout: time.Second, Size: cli.DefaultPingSize}
}

var (
	replyLine = regexp.MustCompile(`(?m)^16 bytes from 127\.0\.0\.2: seq=(\d+) time=\d+\.\d+ ms$`)
	rttLine   = regexp.MustCompile(`(?m)^rtt min/avg/max/mdev = [\d.]+/[\d.]+/[\d.]+/[\d.]+ ms$`)
)

// A loopback context at the EID answers: a line per reply, the
// statistics, status 0.
func TestPingReplies(t *testing.T) {
	openLoopback(t)
	peer := openPeer(t, 1)
	var out bytes.Buffer
	err := cli.Ping(context.Background(), &out, pingOpts("127.0.0.2", 3))
	require.NoError(t, err, out.String())
	require.Equal(t, 0, cli.ExitCode(err))
	s := out.String()
	assert.Contains(t, s, "PING 127.0.0.2 from 127.0.0.1 loopback0: 16 data bytes\n")
	seqs := replyLine.FindAllStringSubmatch(s, -1)
	require.Len(t, seqs, 3, s)
	for i, m := range seqs {
		assert.Equal(t, fmt.Sprint(i+1), m[1])
	}
	assert.Contains(t, s, "--- 127.0.0.2 urma ping statistics ---\n3 packets transmitted, 3 received, 0% packet loss, time ")
	assert.Regexp(t, rttLine, s)

	// By UASID, quietly: no reply lines.
	out.Reset()
	o := pingOpts(fmt.Sprintf("127.0.0.2/%#x", peer.UASID()), 2)
	o.Quiet = true
	require.NoError(t, cli.Ping(context.Background(), &out, o))
	assert.Empty(t, replyLine.FindAllString(out.String(), -1), out.String())
	assert.Contains(t, out.String(), "2 packets transmitted, 2 received, 0% packet loss")
}

// openPeer opens a second context, on EID index i, in the runtime
// directory openLoopback set.
func openPeer(t *testing.T, i int) *urma.Context {
	t.Helper()
	dev, err := urma.DeviceByName(loopback.DeviceName)
	require.NoError(t, err)
	c, err := urma.Open(dev, i, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// An EID nobody has fails at once, with status 1 and no statistics.
func TestPingNobody(t *testing.T) {
	openLoopback(t)
	var out bytes.Buffer
	o := pingOpts("127.0.0.9", 3)
	o.Interval = time.Second
	start := time.Now()
	err := cli.Ping(context.Background(), &out, o)
	require.ErrorIs(t, err, urma.ErrNotFound)
	assert.Equal(t, 1, cli.ExitCode(err))
	assert.Less(t, time.Since(start), 500*time.Millisecond)
	assert.NotContains(t, out.String(), "statistics")
}

// A peer that goes away midway: the requests it misses are errors, and
// the replies before make status 0.
func TestPingPeerGone(t *testing.T) {
	openLoopback(t)
	peer := openPeer(t, 1)
	var out syncBuffer
	o := pingOpts(fmt.Sprintf("127.0.0.2/%d", peer.UASID()), 6)
	o.Interval = 20 * time.Millisecond
	done := make(chan error, 1)
	go func() { done <- cli.Ping(context.Background(), &out, o) }()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "seq=2 ") }, 5*time.Second, time.Millisecond)
	require.NoError(t, peer.Close())
	err := <-done
	require.NoError(t, err, out.String())
	s := out.String()
	assert.Regexp(t, `6 packets transmitted, [23] received, \+[34] errors, [56]\d\.?\d*% packet loss`, s)
	assert.Contains(t, s, "From 127.0.0.2/")
	assert.Regexp(t, rttLine, s)
}

// A peer that never answers: a line per request that timed out, 100%
// loss and status 1.
func TestPingNoReply(t *testing.T) {
	_, dir := openLoopback(t)
	// A listener at a context's socket name that reads and never answers.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "127.0.0.3-0000abcd.sock"), Net: "unix"})
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
			go func() { _, _ = conn.Read(make([]byte, 64)) }()
		}
	}()
	var out bytes.Buffer
	o := pingOpts("127.0.0.3", 2)
	o.Timeout = 50 * time.Millisecond
	err = cli.Ping(context.Background(), &out, o)
	require.Error(t, err)
	assert.Equal(t, 1, cli.ExitCode(err))
	assert.Equal(t, "no reply from 127.0.0.3", err.Error())
	s := out.String()
	assert.Contains(t, s, "no reply from 127.0.0.3: seq=1 within 50ms\n")
	assert.Contains(t, s, "no reply from 127.0.0.3: seq=2 within 50ms\n")
	assert.Contains(t, s, "2 packets transmitted, 0 received, 100% packet loss")
	assert.NotRegexp(t, rttLine, s)
}

// An interrupt ends the run with the statistics and status 130.
func TestPingInterrupt(t *testing.T) {
	openLoopback(t)
	openPeer(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- cli.Ping(ctx, &out, pingOpts("127.0.0.2", 0)) }()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "seq=3 ") }, 5*time.Second, time.Millisecond)
	cancel()
	err := <-done
	assert.Equal(t, cli.ExitInterrupted, cli.ExitCode(err))
	assert.Empty(t, err.Error(), "the statistics said it all")
	assert.Contains(t, out.String(), "urma ping statistics")
	assert.Regexp(t, rttLine, out.String())
}

// A deadline stops an endless run; with a count not reached, status 1.
func TestPingDeadline(t *testing.T) {
	openLoopback(t)
	openPeer(t, 1)
	var out bytes.Buffer
	o := pingOpts("127.0.0.2", 0)
	o.Deadline = 100 * time.Millisecond
	require.NoError(t, cli.Ping(context.Background(), &out, o), out.String())
	o.Count = 1000
	out.Reset()
	err := cli.Ping(context.Background(), &out, o)
	assert.Equal(t, 1, cli.ExitCode(err), out.String())
}

// Wrong options are usage errors: status 2.
func TestPingUsage(t *testing.T) {
	openLoopback(t)
	for name, o := range map[string]cli.PingOptions{
		"target":   pingOpts("host.example", 1),
		"uasid":    pingOpts("127.0.0.2/x", 1),
		"uasid 0":  pingOpts("127.0.0.2/0", 1),
		"count":    pingOpts("127.0.0.2", -1),
		"interval": func() cli.PingOptions { o := pingOpts("127.0.0.2", 1); o.Interval = 0; return o }(),
		"size":     func() cli.PingOptions { o := pingOpts("127.0.0.2", 1); o.Size = 1 << 20; return o }(),
	} {
		err := cli.Ping(context.Background(), &bytes.Buffer{}, o)
		assert.Equal(t, 2, cli.ExitCode(err), "%s: %v", name, err)
	}
	for _, args := range [][]string{{"ping"}, {"ping", "-i", "x", "127.0.0.2"}, {"ping", "-l", "127.0.0.2"}, {"ping", "-W", "-1", "127.0.0.2"}} {
		cmd := cli.New()
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		assert.Equal(t, 2, cli.ExitCode(err), "%v: %v", args, err)
	}
}

// syncBuffer is a bytes.Buffer that one goroutine writes while another
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
