package urmanet_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/nettest"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/urmanet"
)

// relayEnv makes the test binary a relay process: it listens, prints its
// address, and joins the two connections that name the same pair (an
// 8-byte id each dialer writes first), copying each way. A line "close
// ID" on its stdin closes both ends of pair ID; the end of stdin closes
// everything and exits.
const relayEnv = "URMANET_TEST_RELAY"

// relayPair is the relay's state for one pair id.
type relayPair struct {
	conns []net.Conn
}

func relay() int {
	uctx, l, err := childListen()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer uctx.Close()
	fmt.Println(l.Addr())

	var (
		mu    sync.Mutex
		pairs = map[uint64]*relayPair{}
		wg    sync.WaitGroup
	)
	closePair := func(id uint64) {
		mu.Lock()
		p := pairs[id]
		delete(pairs, id)
		mu.Unlock()
		if p != nil {
			for _, c := range p.conns {
				c.Close()
			}
		}
	}
	join := func(c net.Conn) {
		defer wg.Done()
		var b [8]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			c.Close()
			return
		}
		id := binary.LittleEndian.Uint64(b[:])
		mu.Lock()
		p := pairs[id]
		if p == nil {
			p = &relayPair{}
			pairs[id] = p
		}
		p.conns = append(p.conns, c)
		full := len(p.conns) == 2
		mu.Unlock()
		if !full {
			return
		}
		a, z := p.conns[0], p.conns[1]
		var once sync.Once
		fail := func() { once.Do(func() { a.Close(); z.Close() }) }
		cp := func(dst, src net.Conn) {
			defer wg.Done()
			if _, err := io.Copy(dst, src); err != nil {
				fail()
				return
			}
			if err := dst.(*urmanet.Conn).CloseWrite(); err != nil {
				fail()
			}
		}
		wg.Add(2)
		go cp(a, z)
		go cp(z, a)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go join(c)
		}
	}()

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if s, ok := strings.CutPrefix(in.Text(), "close "); ok {
			if id, err := strconv.ParseUint(s, 10, 64); err == nil {
				closePair(id)
			}
		}
	}
	l.Close()
	mu.Lock()
	ids := make([]uint64, 0, len(pairs))
	for id := range pairs {
		ids = append(ids, id)
	}
	mu.Unlock()
	for _, id := range ids {
		closePair(id)
	}
	wg.Wait()
	return 0
}

// relayProc is a relay child of the test.
type relayProc struct {
	cmd   *exec.Cmd
	addr  string
	mu    sync.Mutex // orders the writes to stdin
	stdin io.WriteCloser
	next  uint64
}

func startRelay(t *testing.T) *relayProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), relayEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := &relayProc{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("relay: %v", err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("relay did not exit when its stdin closed")
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	r.addr = strings.TrimSpace(line)
	return r
}

// pipe dials the relay twice from uctx and returns the two ends: what one
// writes crosses to the relay process and back to the other.
func (r *relayProc) pipe(uctx *urma.Context) (c1, c2 net.Conn, stop func(), err error) {
	r.mu.Lock()
	r.next++
	id := r.next
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], id)
	dial := func() (net.Conn, error) {
		c, err := urmanet.Dial(ctx, uctx, r.addr)
		if err != nil {
			return nil, err
		}
		if _, err := c.Write(b[:]); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	if c1, err = dial(); err != nil {
		return nil, nil, nil, err
	}
	if c2, err = dial(); err != nil {
		c1.Close()
		return nil, nil, nil, err
	}
	stop = func() {
		c1.Close()
		c2.Close()
		// A relay end blocked writing to a closed peer waits for credit
		// that never comes: release the pair explicitly.
		r.mu.Lock()
		fmt.Fprintf(r.stdin, "close %d\n", id)
		r.mu.Unlock()
	}
	return c1, c2, stop, nil
}

// TestNettestConnCrossProcess runs the net.Conn conformance tests on a
// pipe whose bytes cross to a relay process and back.
func TestNettestConnCrossProcess(t *testing.T) {
	r := startRelay(t)
	client := openCtx(t, 1)
	nettest.TestConn(t, func() (net.Conn, net.Conn, func(), error) {
		return r.pipe(client)
	})
}
