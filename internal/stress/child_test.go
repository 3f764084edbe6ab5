package stress

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// envChild makes the test binary a peer: it holds the child's config.
const envChild = "URMA_STRESS_CHILD"

type childSpec struct {
	Config   Config
	Duration time.Duration // 0: until killed
}

// maybeChild runs the peer side and exits, when the binary was started as
// one by startChild.
func maybeChild() {
	spec := os.Getenv(envChild)
	if spec == "" {
		return
	}
	var s childSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, "stress child:", err)
		os.Exit(2)
	}
	st, err := Side(context.Background(), s.Config, s.Duration, os.Stdin, os.Stdout, nil)
	fmt.Printf("stats %s\n", st)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stress child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// child is a peer process; its stdout reaches the test through out, which
// ends (EOF) when the process is gone.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *eofReader
}

// eofReader tells when its reader has seen the end of the stream, so that
// everything the child wrote has been handled.
type eofReader struct {
	f    *os.File
	once sync.Once
	eof  chan struct{}
}

func (r *eofReader) Read(b []byte) (int, error) {
	n, err := r.f.Read(b)
	if err != nil {
		r.once.Do(func() { close(r.eof) })
	}
	return n, err
}

func (c *child) outDone() <-chan struct{} { return c.out.eof }

func startChild(t *testing.T, s childSpec) *child {
	t.Helper()
	spec, err := json.Marshal(s)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+string(spec))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout = w
	require.NoError(t, cmd.Start())
	w.Close() // the child holds the write end: EOF means it is gone
	c := &child{cmd: cmd, stdin: stdin, out: &eofReader{f: r, eof: make(chan struct{})}}
	t.Cleanup(func() {
		// A test that failed half-way must not leave its child running.
		if c.cmd.ProcessState == nil {
			c.signal(syscall.SIGKILL)
			_ = c.cmd.Wait()
		}
		r.Close()
	})
	return c
}

func (c *child) signal(s syscall.Signal) { _ = c.cmd.Process.Signal(s) }

// wait reaps the process and closes the test's ends of its pipes.
func (c *child) wait() error {
	return c.cmd.Wait()
}
