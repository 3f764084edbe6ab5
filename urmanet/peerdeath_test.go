package urmanet_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/urmanet"
)

// holderEnv makes the test binary hold two connections and then stop
// doing anything until it is killed: it listens, prints its address,
// accepts two connections, writes holderSays to the first, reads from
// neither, and waits for its stdin to end.
const holderEnv = "URMANET_TEST_HOLDER"

const holderSays = "the first bytes of a stream that stops"

func holder() int {
	uctx, l, err := childListen()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer uctx.Close()
	defer l.Close()
	fmt.Println(l.Addr())
	for k := range 2 {
		c, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer c.Close()
		if k == 0 {
			if _, err := io.WriteString(c, holderSays); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// TestPeerDeath kills the process at the other end of two connections:
// one with a Read waiting for more of a stream, one with a Write waiting
// for credit the peer will never return. Both must fail within a second
// of the kill with ErrPeerLost, not the end of the stream nor their (far)
// deadline.
func TestPeerDeath(t *testing.T) {
	const (
		detectWithin = time.Second
		outer        = 10 * time.Second
	)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Wait()
	defer stdin.Close()
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	addr := strings.TrimSpace(line)

	client := openCtx(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), outer)
	defer cancel()
	rc, err := urmanet.Dial(ctx, client, addr)
	require.NoError(t, err)
	defer rc.Close()
	wc, err := urmanet.Dial(ctx, client, addr)
	require.NoError(t, err)
	defer wc.Close()

	// Mid-stream: what the peer wrote has arrived.
	got := make([]byte, len(holderSays))
	require.NoError(t, rc.SetDeadline(time.Now().Add(outer)))
	_, err = io.ReadFull(rc, got)
	require.NoError(t, err)
	require.Equal(t, holderSays, string(got))

	type result struct {
		err error
		at  time.Time
	}
	// A Read with nothing to read.
	readRes := make(chan result, 1)
	go func() {
		_, err := rc.Read(make([]byte, 64))
		readRes <- result{err, time.Now()}
	}()
	// A Write that spends the peer's window and then waits for credit.
	require.NoError(t, wc.SetDeadline(time.Now().Add(outer)))
	chunk := make([]byte, urmanet.SlotSize)
	var sent atomic.Int64
	writeRes := make(chan result, 1)
	go func() {
		for {
			if _, err := wc.Write(chunk); err != nil {
				writeRes <- result{err, time.Now()}
				return
			}
			sent.Add(1)
		}
	}()
	// The writer stalls once the peer's window is spent (the peer reads
	// nothing): no Write has returned for a while, and the Read and the
	// Write are both waiting.
	last, since := int64(-1), time.Now()
	require.Eventually(t, func() bool {
		if n := sent.Load(); n != last {
			last, since = n, time.Now()
		}
		return last > 0 && time.Since(since) > 200*time.Millisecond
	}, outer, 10*time.Millisecond, "the writer did not stall")
	select {
	case r := <-readRes:
		t.Fatalf("Read returned before the kill: %v", r.err)
	case r := <-writeRes:
		t.Fatalf("Write returned before the kill: %v", r.err)
	default:
	}

	require.NoError(t, cmd.Process.Kill())
	killed := time.Now()

	// Both results are checked, so that a failure says what each did.
	check := func(what string, r result) {
		t.Helper()
		took := r.at.Sub(killed)
		t.Logf("%s returned %v after the kill: %v", what, took, r.err)
		if !assert.Error(t, r.err, what) {
			return
		}
		assert.False(t, errors.Is(r.err, io.EOF), "%s after the peer died: %v (EOF: the peer sent no FIN)", what, r.err)
		assert.False(t, errors.Is(r.err, os.ErrDeadlineExceeded), "%s after the peer died: waited %v for its deadline: %v", what, took, r.err)
		assert.ErrorIs(t, r.err, urmanet.ErrPeerLost, what)
		assert.Less(t, took, detectWithin, "%s noticed the peer's death after %v: %v", what, took, r.err)
	}
	check("Read", <-readRes)
	check("Write", <-writeRes)
}
