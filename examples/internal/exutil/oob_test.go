package exutil

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAcceptAndDial(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c, err := Dial(context.Background(), l.Addr().String(), 5*time.Second)
		if err == nil {
			_, _ = c.Write([]byte("hi"))
			_ = c.Close()
		}
	}()
	c, err := Accept(ctx, l)
	require.NoError(t, err)
	m, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, "hi", string(m))
	_ = c.Close()

	// A cancelled Accept returns promptly and closes the listener.
	cancel()
	_, err = Accept(ctx, l)
	assert.ErrorIs(t, err, context.Canceled)

	// Dial gives up after its wait when nobody listens, and says at once
	// (once) that it is waiting.
	var notes strings.Builder
	DialNotes = &notes
	t.Cleanup(func() { DialNotes = os.Stderr })
	_, err = Dial(context.Background(), l.Addr().String(), 200*time.Millisecond)
	var ne net.Error
	assert.True(t, errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &ne) && ne.Timeout(),
		"a refusal, or a try's timeout on a slow machine: %v", err)
	assert.Equal(t, 1, strings.Count(notes.String(), "no server at "+l.Addr().String()+" yet"), notes.String())

	// An address no try mends fails at once, untold.
	notes.Reset()
	_, err = Dial(context.Background(), "no-such-host.invalid:1", time.Minute)
	assert.Error(t, err)
	assert.Empty(t, notes.String())
}

func TestCommonFlags(t *testing.T) {
	c := Common{Mode: "poll"}
	assert.NoError(t, c.Validate())
	c.Mode = "spin"
	assert.ErrorContains(t, c.Validate(), `-mode "spin"`)
	c = Common{Mode: "event", Server: true, Client: true}
	assert.ErrorContains(t, c.Validate(), "exclude each other")
	c = Common{Mode: "event", EID: -1, Dev: "loopback0"}
	assert.True(t, c.Event() && c.OneProcess())
	e, err := c.EIDFor(true)
	require.NoError(t, err)
	assert.Equal(t, 1, e, "the client of a one-process run takes EID 1 of loopback0")
	e, err = c.EIDFor(false)
	require.NoError(t, err)
	assert.Equal(t, 0, e)
	c.EID = 3
	e, _ = c.EIDFor(true)
	assert.Equal(t, 3, e)
	_, err = Open("", "nope", 0)
	assert.Error(t, err)
	_, err = Open("", "loopback0", 99)
	assert.ErrorContains(t, err, "no index 99")
}

// Both reports the client's failure alone when it leaves the server
// waiting for it, and the server's own failure otherwise.
func TestBoth(t *testing.T) {
	boom := errors.New("boom")
	err := Both(func(l net.Listener) error {
		_, err := l.Accept()
		return err
	}, func(string) error { return boom })
	assert.Equal(t, boom, err, "the waiting server's ErrClosed is not an error of its own")

	err = Both(func(l net.Listener) error {
		defer l.Close()
		c, err := l.Accept()
		if err != nil {
			return err
		}
		_ = c.Close()
		return io.ErrUnexpectedEOF
	}, func(addr string) error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err
	})
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}
