package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/urma-go/sdk/urma"
)

// The Echo service, as protoc-gen-go-grpc would write it for
//
//	service Echo {
//	  rpc Echo(google.protobuf.BytesValue) returns (google.protobuf.BytesValue);
//	  rpc Chat(stream google.protobuf.BytesValue) returns (stream google.protobuf.BytesValue);
//	}
const (
	serviceName = "urma.examples.Echo"
	echoMethod  = "/" + serviceName + "/Echo"
	chatMethod  = "/" + serviceName + "/Chat"
)

// echoServer is the service's server side.
type echoServer interface {
	Echo(context.Context, *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error)
	Chat(grpc.BidiStreamingServer[wrapperspb.BytesValue, wrapperspb.BytesValue]) error
}

var echoDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*echoServer)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Echo",
		Handler: func(srv any, ctx context.Context, dec func(any) error, intercept grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.BytesValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			if intercept == nil {
				return srv.(echoServer).Echo(ctx, in)
			}
			info := &grpc.UnaryServerInfo{Server: srv, FullMethod: echoMethod}
			return intercept(ctx, in, info, func(ctx context.Context, req any) (any, error) {
				return srv.(echoServer).Echo(ctx, req.(*wrapperspb.BytesValue))
			})
		},
	}},
	Streams: []grpc.StreamDesc{{
		StreamName: "Chat",
		Handler: func(srv any, stream grpc.ServerStream) error {
			return srv.(echoServer).Chat(&grpc.GenericServerStream[wrapperspb.BytesValue, wrapperspb.BytesValue]{ServerStream: stream})
		},
		ServerStreams: true,
		ClientStreams: true,
	}},
}

// echo implements the service.
type echo struct{}

// Echo answers with the message and whom it came from.
func (echo) Echo(ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	from := "unknown"
	if p, ok := peer.FromContext(ctx); ok {
		from = p.Addr.Network() + " " + p.Addr.String()
	}
	return wrapperspb.Bytes(fmt.Appendf(nil, "%s (from %s)", in.GetValue(), from)), nil
}

// Chat sends every message back as it comes, until the client closes its
// side.
func (echo) Chat(stream grpc.BidiStreamingServer[wrapperspb.BytesValue, wrapperspb.BytesValue]) error {
	for {
		in, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(in); err != nil {
			return err
		}
	}
}

// newServer is an ordinary gRPC server with the Echo service and the
// health service.
func newServer(w io.Writer, uctx *urma.Context, l net.Listener) *grpc.Server {
	fmt.Fprintf(w, "server: %v, listening on %v\n", uctx.Device(), l.Addr())
	s := grpc.NewServer()
	s.RegisterService(&echoDesc, echo{})
	healthpb.RegisterHealthServer(s, health.NewServer())
	return s
}
