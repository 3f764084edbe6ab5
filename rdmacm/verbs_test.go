package rdmacm_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/ib"
	"github.com/urma-go/sdk/rdmacm"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
)

// end is one side of a plain rdma_cm connection: a context, an RC Jetty
// with a JFC, and one segment the peer may READ and WRITE.
type end struct {
	ctx *urma.Context
	jfc *jetty.JFC
	j   *jetty.Jetty
	seg *segment.Segment
}

func newEnd(t *testing.T, dev *urma.Device) *end {
	t.Helper()
	e := &end{}
	var err error
	e.ctx, err = urma.Open(dev, 0, nil)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.ctx.Close()) })
	e.jfc, err = jetty.NewJFC(e.ctx, jetty.JFCConfig{Depth: 32})
	require.NoError(t, err)
	e.j, err = jetty.NewJetty(e.ctx, jetty.JettyConfig{Send: jetty.JFSConfig{Depth: 8, Mode: urma.RC, JFC: e.jfc}, Recv: jetty.JFRConfig{Depth: 8}})
	require.NoError(t, err)
	e.seg, err = segment.Alloc(e.ctx, 4096, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	return e
}

// next polls for one record.
func (e *end) next(t *testing.T) jetty.CR {
	t.Helper()
	crs := make([]jetty.CR, 1)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		n, err := e.jfc.Poll(crs)
		require.NoError(t, err)
		if n == 1 {
			return crs[0]
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no completion within 20s")
	return jetty.CR{}
}

// TestVerbsPeer connects two Jetties as plain rdma_cm peers would, on the
// guest's Soft-RoCE and soft-iWARP devices: the client advertises a buffer
// by address and rkey in a SEND, as rping does, and the server WRITEs and
// READs it through the Target it imports from the advertisement.
func TestVerbsPeer(t *testing.T) {
	env := vm.Require(t)
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		t.Run(d.Name, func(t *testing.T) {
			dev, err := urma.DeviceByName(d.Name)
			require.NoError(t, err)
			srv, cli := newEnd(t, dev), newEnd(t, dev)
			// Receives first: the peer may send as soon as it is connected.
			require.NoError(t, srv.j.Recv(srv.seg.SGE(0, 16), 1))
			require.NoError(t, cli.j.Recv(cli.seg.SGE(2048, 16), 2))

			l, err := rdmacm.Listen(srv.ctx, net.JoinHostPort(d.Addr.String(), "0"))
			require.NoError(t, err)
			defer l.Close()
			require.Equal(t, d.Addr, l.Addr().Addr())
			require.NotZero(t, l.Addr().Port())

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			type accepted struct {
				c   *rdmacm.Conn
				err error
			}
			ch := make(chan accepted, 1)
			go func() {
				c, err := l.Accept(ctx, srv.j)
				ch <- accepted{c, err}
			}()
			cc, err := rdmacm.Dial(ctx, cli.j, l.Addr().String())
			require.NoError(t, err)
			a := <-ch
			require.NoError(t, a.err)
			sc := a.c
			assert.Equal(t, l.Addr(), cc.PeerAddr())
			assert.Equal(t, d.Addr, sc.PeerAddr().Addr())

			// The client advertises its segment as rping does.
			va, rkey, err := cc.Key(cli.seg)
			require.NoError(t, err)
			ad := cli.seg.Bytes()[1024:1040]
			binary.BigEndian.PutUint64(ad, va)
			binary.BigEndian.PutUint32(ad[8:], rkey)
			binary.BigEndian.PutUint32(ad[12:], 512)
			copy(cli.seg.Bytes()[512:], "the client's data")
			require.NoError(t, cli.j.Send(nil, cli.seg.SGE(1024, 16), 0, 10))
			cr := cli.next(t)
			require.True(t, cr.OK(), "%v", cr)
			cr = srv.next(t)
			require.True(t, cr.OK(), "%v", cr)
			require.Equal(t, uint32(16), cr.Len)
			require.NotZero(t, cr.Flags&jetty.CRRecv)

			b := srv.seg.Bytes()
			t0, err := sc.Import(binary.BigEndian.Uint64(b), uint64(binary.BigEndian.Uint32(b[12:])), binary.BigEndian.Uint32(b[8:]))
			require.NoError(t, err)
			defer t0.Close()
			copy(b[100:], "written by the server")
			require.NoError(t, srv.j.Write(nil, t0.SGE(0, 21), srv.seg.SGE(100, 21), 0, 11))
			cr = srv.next(t)
			require.True(t, cr.OK(), "%v", cr)
			require.NoError(t, srv.j.Read(nil, t0.SGE(512, 17), srv.seg.SGE(200, 17), 0, 12))
			cr = srv.next(t)
			require.True(t, cr.OK(), "%v", cr)
			assert.Equal(t, "written by the server", string(cli.seg.Bytes()[:21]))
			assert.Equal(t, "the client's data", string(b[200:217]))

			// A go-ahead back, into the client's posted receive.
			require.NoError(t, srv.j.Send(nil, srv.seg.SGE(300, 16), 0, 13))
			cr = srv.next(t)
			require.True(t, cr.OK(), "%v", cr)
			cr = cli.next(t)
			require.True(t, cr.OK(), "%v", cr)
			assert.Equal(t, uint64(2), cr.UserCtx)

			// A Jetty with a connection refuses another, and Bind refuses
			// the peer's stand-in.
			_, err = rdmacm.Dial(ctx, cli.j, l.Addr().String())
			require.ErrorIs(t, err, urma.ErrExist)
			other, err := jetty.NewJetty(cli.ctx, jetty.JettyConfig{Send: jetty.JFSConfig{Depth: 4, Mode: urma.RC, JFC: cli.jfc}, Recv: jetty.JFRConfig{Depth: 4}})
			require.NoError(t, err)
			require.ErrorIs(t, other.Bind(ctx, cc.Peer()), urma.ErrInvalid)

			// Nobody listens on the listener's port plus one.
			_, err = rdmacm.Dial(ctx, other, net.JoinHostPort(d.Addr.String(), strconv.Itoa(int(l.Addr().Port())+1)))
			require.ErrorIs(t, err, urma.ErrNotFound)
			// An Accept that nobody dials ends with its context.
			short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
			defer stop()
			spare, err := jetty.NewJetty(srv.ctx, jetty.JettyConfig{Send: jetty.JFSConfig{Depth: 4, Mode: urma.RC, JFC: srv.jfc}, Recv: jetty.JFRConfig{Depth: 4}})
			require.NoError(t, err)
			_, err = l.Accept(short, spare)
			require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
			// Closing a listener ends its Accept.
			l2, err := rdmacm.Listen(srv.ctx, net.JoinHostPort(d.Addr.String(), "0"))
			require.NoError(t, err)
			time.AfterFunc(200*time.Millisecond, func() { _ = l2.Close() })
			_, err = l2.Accept(ctx, spare)
			require.ErrorIs(t, err, urma.ErrClosed)
			require.NoError(t, l2.Close())
			// A Jetty of another context is refused.
			_, err = l.Accept(ctx, other)
			require.ErrorIs(t, err, urma.ErrInvalid)

			// The client hangs up: the server's next request fails, and
			// the server's Jetty can be used again.
			select {
			case <-sc.Done():
				t.Fatal("the server's connection ended early")
			default:
			}
			require.NoError(t, cc.Close())
			require.NoError(t, cc.Close())
			select {
			case <-cc.Done():
			default:
				t.Fatal("Close left Done open")
			}
			select {
			case <-sc.Done():
			case <-time.After(20 * time.Second):
				t.Fatal("the server did not see the client hang up within 20s")
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				require.NoError(t, srv.j.Write(nil, t0.SGE(0, 4), srv.seg.SGE(100, 4), 0, 14))
				cr = srv.next(t)
				if !cr.OK() || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			require.False(t, cr.OK(), "the server still writes 20s after the client hung up")
			require.NoError(t, sc.Close())
		})
	}
}
