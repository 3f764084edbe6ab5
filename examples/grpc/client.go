package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/urma-go/sdk/examples/internal/exutil"
)

// chatSizes are the sizes of the messages the client streams: from one
// byte to many of a connection's slots (urmanet.SlotSize), under gRPC's
// default 4 MiB limit.
var chatSizes = []int{1, 1000, 64 << 10, 1 << 20}

// runClient checks the server's health, calls Echo and chats at addr.
func runClient(ctx context.Context, w io.Writer, cfg exutil.Net, addr string) error {
	uctx, err := cfg.Open(true)
	if err != nil {
		return err
	}
	defer uctx.Close()
	dial := cfg.Dialer(uctx)
	// passthrough hands addr to the dialer as it is: a urmanet address.
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return dial(ctx, addr) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	fmt.Fprintf(w, "client: %v, eid %v, dialling %s\n", uctx.Device(), uctx.EID(), addr)

	h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	fmt.Fprintf(w, "client: health: %v\n", h.GetStatus())

	out := new(wrapperspb.BytesValue)
	if err := conn.Invoke(ctx, echoMethod, wrapperspb.Bytes([]byte("hello")), out); err != nil {
		return fmt.Errorf("Echo: %w", err)
	}
	fmt.Fprintf(w, "client: Echo: %q\n", out.GetValue())

	n, total, err := chat(ctx, conn)
	if err != nil {
		return fmt.Errorf("Chat: %w", err)
	}
	fmt.Fprintf(w, "client: Chat: %d messages (%d bytes) sent, all echoed back\n", n, total)
	return nil
}

// chat streams chatSizes' messages, each read back before the next goes,
// and checks every echo.
func chat(ctx context.Context, conn *grpc.ClientConn) (int, int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := conn.NewStream(ctx, &echoDesc.Streams[0], chatMethod)
	if err != nil {
		return 0, 0, err
	}
	stream := &grpc.GenericClientStream[wrapperspb.BytesValue, wrapperspb.BytesValue]{ClientStream: s}
	total := 0
	for i, size := range chatSizes {
		msg := make([]byte, size)
		for j := range msg {
			msg[j] = byte(i + j*7)
		}
		if err := stream.Send(wrapperspb.Bytes(msg)); err != nil {
			return i, total, err
		}
		back, err := stream.Recv()
		if err != nil {
			return i, total, err
		}
		if !bytes.Equal(back.GetValue(), msg) {
			return i, total, fmt.Errorf("message %d (%d bytes) came back as %d different bytes", i, size, len(back.GetValue()))
		}
		total += size
	}
	if err := stream.CloseSend(); err != nil {
		return len(chatSizes), total, err
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		return len(chatSizes), total, fmt.Errorf("after the last message: %v, want the end of the stream", err)
	}
	return len(chatSizes), total, nil
}
