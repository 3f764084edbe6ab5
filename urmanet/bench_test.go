package urmanet_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/urma-go/sdk/urmanet"
)

// benchPipe connects two loopback contexts of this process.
func benchPipe(b *testing.B, poll bool) (net.Conn, net.Conn) {
	server, client := openCtx(b, 0), openCtx(b, 1)
	lc := urmanet.ListenConfig{Poll: poll}
	l, err := lc.Listen(server, ":0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		acc <- c
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := urmanet.Dialer{Poll: poll}
	c1, err := d.Dial(ctx, client, l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	c2 := <-acc
	if c2 == nil {
		b.Fatal("accept failed")
	}
	b.Cleanup(func() { c1.Close(); c2.Close() })
	return c1, c2
}

// benchEcho sends size bytes and waits for them to come back, per op.
func benchEcho(b *testing.B, poll bool, size int) {
	c1, c2 := benchPipe(b, poll)
	go func() {
		buf := make([]byte, size)
		for {
			if _, err := io.ReadFull(c2, buf); err != nil {
				return
			}
			if _, err := c2.Write(buf); err != nil {
				return
			}
		}
	}()
	buf := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c1.Write(buf); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c1, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEcho64(b *testing.B)     { benchEcho(b, false, 64) }
func BenchmarkEcho64Poll(b *testing.B) { benchEcho(b, true, 64) }

// BenchmarkStream1MiB writes 1 MiB per op to a reader that discards it.
func BenchmarkStream1MiB(b *testing.B) {
	c1, c2 := benchPipe(b, false)
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, c2)
		close(done)
	}()
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c1.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	c1.(*urmanet.Conn).CloseWrite()
	<-done
}
