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

// FuzzReadMsg: the out-of-band stream comes from the peer. ReadMsg must
// deliver exactly the framed messages, refuse lengths past MaxMsg, and
// what it delivers must frame back into the bytes it consumed.
func FuzzReadMsg(f *testing.F) {
	var b bytes.Buffer
	_ = WriteMsg(&b, []byte("hello"))
	_ = WriteMsg(&b, nil)
	_ = WriteMsg(&b, make([]byte, 300))
	f.Add(b.Bytes())
	f.Add([]byte{0, 0, 0, 9, 'x'})
	f.Add([]byte{0, 1, 0, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		var again bytes.Buffer
		for {
			rest := in[len(in)-r.Len():]
			m, err := ReadMsg(r)
			if err != nil {
				if len(rest) >= 4 && binary.BigEndian.Uint32(rest) > MaxMsg {
					require.ErrorContains(t, err, "limit")
				} else {
					require.True(t, len(rest) < 4 || int(binary.BigEndian.Uint32(rest)) > len(rest)-4,
						"refused a complete message: %v", err)
				}
				break
			}
			require.Equal(t, int(binary.BigEndian.Uint32(rest)), len(m))
			require.Equal(t, rest[4:4+len(m)], m)
			require.NoError(t, WriteMsg(&again, m))
		}
		// The refused message may have had its length read already, so
		// the messages delivered frame into a prefix of the input.
		require.True(t, bytes.HasPrefix(in, again.Bytes()), "delivered messages reframe as %x", again.Bytes())
	})
}
