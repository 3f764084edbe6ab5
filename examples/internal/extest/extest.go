// Package extest runs example programs as separate processes in tests:
// build once, start a server and a client, wait for their output, and
// stop them with the signal a user would send.
package extest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildMu sync.Mutex
	built   = map[string]string{}
)

// Build compiles the example in the test's directory (its package) once
// per test binary, with this test binary's build tags and race mode, and
// returns the program's path.
func Build(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := built[dir]; ok {
		return bin
	}
	out, err := os.MkdirTemp("", "urma-example-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(out, filepath.Base(dir))
	args := []string{"build", "-o", bin}
	if buildTags != "" {
		args = append(args, "-tags", buildTags)
	}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, msg)
	}
	built[dir] = bin
	return bin
}

// Proc is a running example program.
type Proc struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	err  error
}

// Write collects the program's output (stdout and stderr together).
func (p *Proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// Output is what the program printed so far.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Start runs bin with args. The test's cleanup kills it if it still runs.
func Start(t testing.TB, name, bin string, args ...string) *Proc {
	t.Helper()
	p := &Proc{t: t, name: name, cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
			t.Logf("%s was still running; killed. Output:\n%s", p.name, p.Output())
		}
	})
	return p
}

// Wait waits for the program to exit and returns its output and exit
// error; a program still running after timeout is killed and that is an
// error.
func (p *Proc) Wait(timeout time.Duration) (string, error) {
	select {
	case <-p.done:
		return p.Output(), p.err
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return p.Output(), fmt.Errorf("%s did not exit within %v", p.name, timeout)
	}
}

// Signal sends sig (os.Interrupt for Ctrl-C).
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Interrupt is Ctrl-C.
func (p *Proc) Interrupt() error { return p.Signal(syscall.SIGINT) }

// Await waits until the output matches re, and fails the test if the
// program exits first or timeout passes.
func (p *Proc) Await(re *regexp.Regexp, timeout time.Duration) []string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if m := re.FindStringSubmatch(p.Output()); m != nil {
			return m
		}
		select {
		case <-p.done:
			p.t.Fatalf("%s exited (%v) before printing %q:\n%s", p.name, p.err, re, p.Output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s did not print %q within %v:\n%s", p.name, re, timeout, p.Output())
		}
	}
}

// FreeAddr returns a TCP address on 127.0.0.1 that was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Context is a context for one test step.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// ExitCode is a finished program's exit status: 0 for a nil error, and a
// test failure for an error that is not an exit (a kill, a timeout).
func ExitCode(t testing.TB, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the program did not exit: %v", err)
	}
	return ee.ExitCode()
}
