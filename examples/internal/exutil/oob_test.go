package exutil

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMessages(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteMsg(&b, []byte("hello")))
	require.NoError(t, WriteMsg(&b, nil))
	m, err := ReadMsg(&b)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(m))
	m, err = ReadMsg(&b)
	require.NoError(t, err)
	assert.Empty(t, m)
	_, err = ReadMsg(&b)
	assert.ErrorContains(t, err, "out-of-band read")

	assert.ErrorContains(t, WriteMsg(&b, make([]byte, MaxMsg+1)), "limit")
	var huge [4]byte
	binary.BigEndian.PutUint32(huge[:], MaxMsg+1)
	_, err = ReadMsg(bytes.NewReader(huge[:]))
	assert.ErrorContains(t, err, "limit", "a length past the limit is refused before anything is allocated")
	_, err = ReadMsg(bytes.NewReader([]byte{0, 0, 0, 9, 'x'}))
	assert.ErrorContains(t, err, "out-of-band read", "a message cut short")
}

func TestAcceptAndDial(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c, err := Dial(context.Background(), l.Addr().String(), 5*time.Second)
		if err == nil {
			_ = WriteMsg(c, []byte("hi"))
			_ = c.Close()
		}
	}()
	c, err := Accept(ctx, l)
	require.NoError(t, err)
	m, err := ReadMsg(c)
	require.NoError(t, err)
	assert.Equal(t, "hi", string(m))
	_ = c.Close()

	// A cancelled Accept returns promptly and closes the listener.
	cancel()
	_, err = Accept(ctx, l)
	assert.ErrorIs(t, err, context.Canceled)

	// Dial gives up after its wait when nobody listens.
	start := time.Now()
	_, err = Dial(context.Background(), l.Addr().String(), 200*time.Millisecond)
	assert.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
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
