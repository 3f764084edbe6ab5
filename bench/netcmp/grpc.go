package main

import (
	"context"
	"encoding/binary"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The gRPC service, defined by hand (no generated code): Unary echoes a
// BytesValue; Stream takes BytesValues until the client closes its side
// and answers with one BytesValue holding the byte count, little endian.
const (
	unaryMethod  = "/netcmp.Echo/Unary"
	streamMethod = "/netcmp.Echo/Stream"
)

type echoer interface{}

type echoService struct{}

var echoDesc = grpc.ServiceDesc{
	ServiceName: "netcmp.Echo",
	HandlerType: (*echoer)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "Unary", Handler: unaryHandler}},
	Streams: []grpc.StreamDesc{{StreamName: "Stream", Handler: streamHandler,
		ServerStreams: true, ClientStreams: true}},
}

var streamDesc = echoDesc.Streams[0]

func unaryHandler(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
	in := new(wrapperspb.BytesValue)
	if err := dec(in); err != nil {
		return nil, err
	}
	if ic == nil {
		return in, nil
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: unaryMethod}
	return ic(ctx, in, info, func(_ context.Context, req any) (any, error) { return req, nil })
}

func streamHandler(_ any, s grpc.ServerStream) error {
	var n uint64
	in := new(wrapperspb.BytesValue)
	for {
		err := s.RecvMsg(in)
		if err == io.EOF {
			return s.SendMsg(wrapperspb.Bytes(binary.LittleEndian.AppendUint64(nil, n)))
		}
		if err != nil {
			return err
		}
		n += uint64(len(in.Value))
	}
}
