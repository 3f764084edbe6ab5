package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// dialFunc opens one connection of a transport to its server listener.
type dialFunc func(ctx context.Context) (net.Conn, error)

// Every measurement opens its own connection and shuts it down before the
// next one starts, so that no idle connection (a polling one above all)
// runs beside the other side of the pair. Opening and shutting down are
// not timed.

// finish shuts c down in order: the server reads EOF and closes its end,
// and this side waits for the EOF of that, so that the server's end is
// gone before the next measurement starts.
func finish(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		if err := cw.CloseWrite(); err != nil {
			return err
		}
	}
	_, err := io.Copy(io.Discard, c)
	return err
}

// echoP50 is the median round trip, in microseconds, of n echoes of size
// bytes on a fresh connection, after warm untimed ones.
func echoP50(ctx context.Context, dial dialFunc, size, warm, n int) (float64, error) {
	c, err := dial(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte{modeEcho}); err != nil {
		return 0, err
	}
	out, in := make([]byte, size), make([]byte, size)
	for i := range out {
		out[i] = byte(i)
	}
	rtts := make([]float64, 0, n)
	for i := range warm + n {
		t0 := time.Now()
		if _, err := c.Write(out); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(c, in); err != nil {
			return 0, err
		}
		if i >= warm {
			rtts = append(rtts, float64(time.Since(t0).Nanoseconds())/1e3)
		}
	}
	if in[size-1] != out[size-1] {
		return 0, fmt.Errorf("echo returned other bytes")
	}
	return quantile(rtts, 0.5), finish(c)
}

// streamMBps is the throughput, in MB/s of 2^20 bytes, of total bytes
// written in writes of wsize bytes, timed from the first write to the
// server's ack of the last byte, after an untimed burst of the same size.
func streamMBps(ctx context.Context, dial dialFunc, wsize int, total int64) (float64, error) {
	c, err := dial(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte{modeSink}); err != nil {
		return 0, err
	}
	buf := make([]byte, wsize)
	for i := range buf {
		buf[i] = byte(i)
	}
	burst := func() (time.Duration, error) {
		var hdr [8]byte
		binary.LittleEndian.PutUint64(hdr[:], uint64(total))
		t0 := time.Now()
		if _, err := c.Write(hdr[:]); err != nil {
			return 0, err
		}
		for left := total; left > 0; {
			w := buf[:min(left, int64(len(buf)))]
			if _, err := c.Write(w); err != nil {
				return 0, err
			}
			left -= int64(len(w))
		}
		if _, err := io.ReadFull(c, hdr[:1]); err != nil {
			return 0, err
		}
		return time.Since(t0), nil
	}
	if _, err := burst(); err != nil {
		return 0, err
	}
	d, err := burst()
	if err != nil {
		return 0, err
	}
	return float64(total) / (1 << 20) / d.Seconds(), finish(c)
}

// grpcClient is a gRPC client connection whose transport is dial.
func grpcClient(dial dialFunc) (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///netcmp",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }))
}

// grpcUnaryP50 is the median latency, in microseconds, of n unary calls
// of size bytes on a fresh client connection, after warm untimed ones.
func grpcUnaryP50(ctx context.Context, dial dialFunc, size, warm, n int) (float64, error) {
	cc, err := grpcClient(dial)
	if err != nil {
		return 0, err
	}
	defer cc.Close()
	req, resp := wrapperspb.Bytes(make([]byte, size)), new(wrapperspb.BytesValue)
	lat := make([]float64, 0, n)
	for i := range warm + n {
		t0 := time.Now()
		if err := cc.Invoke(ctx, unaryMethod, req, resp); err != nil {
			return 0, err
		}
		if i >= warm {
			lat = append(lat, float64(time.Since(t0).Nanoseconds())/1e3)
		}
		if len(resp.Value) != size {
			return 0, fmt.Errorf("unary call returned %d bytes, want %d", len(resp.Value), size)
		}
	}
	return quantile(lat, 0.5), nil
}

// grpcStreamMBps is the throughput, in MB/s of 2^20 bytes, of total bytes
// sent on one client stream in messages of msize bytes, timed from the
// first message to the server's count, after an untimed stream of the
// same size on the same client connection.
func grpcStreamMBps(ctx context.Context, dial dialFunc, msize int, total int64) (float64, error) {
	cc, err := grpcClient(dial)
	if err != nil {
		return 0, err
	}
	defer cc.Close()
	msg := wrapperspb.Bytes(make([]byte, msize))
	one := func() (time.Duration, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		t0 := time.Now()
		s, err := cc.NewStream(ctx, &streamDesc, streamMethod)
		if err != nil {
			return 0, err
		}
		for left := total; left > 0; left -= int64(msize) {
			if err := s.SendMsg(msg); err != nil {
				return 0, err
			}
		}
		if err := s.CloseSend(); err != nil {
			return 0, err
		}
		got := new(wrapperspb.BytesValue)
		if err := s.RecvMsg(got); err != nil {
			return 0, err
		}
		d := time.Since(t0)
		want := (total + int64(msize) - 1) / int64(msize) * int64(msize)
		if len(got.Value) != 8 || int64(binary.LittleEndian.Uint64(got.Value)) != want {
			return 0, fmt.Errorf("stream: the server counted other than %d bytes", want)
		}
		return d, nil
	}
	if _, err := one(); err != nil {
		return 0, err
	}
	d, err := one()
	if err != nil {
		return 0, err
	}
	want := (total + int64(msize) - 1) / int64(msize) * int64(msize)
	return float64(want) / (1 << 20) / d.Seconds(), nil
}
