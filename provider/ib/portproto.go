package ib

import (
	"encoding/binary"

	"github.com/urma-go/sdk/provider"
)

// portAnswerSize is the length of the answer to opResolvePort: a reply,
// then the published Jetty's descriptor and token. It fits the private
// data of a reject on every transport (rejectDataSize on IB and RoCE).
const portAnswerSize = replySize + provider.JettyDescSize + 4

// portRequest asks the listener at port for what is published there.
func portRequest(port uint16, srcUASID uint32) request {
	return request{op: opResolvePort, target: uint32(port), srcUASID: srcUASID}
}

// portAnswer is the reject data that answers a port request with desc
// and token, the way group imports append their member ids to a reply.
func portAnswer(desc provider.JettyDesc, token uint32) ([]byte, error) {
	d, err := desc.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := append((&reply{status: replyOK}).marshal(), d...)
	return binary.BigEndian.AppendUint32(b, token), nil
}

// parsePortAnswer decodes the answer to a port request: a refusal as its
// sentinel, else the descriptor and token. Transports may pad private
// data with zeros, so longer input is accepted.
func parsePortAnswer(b []byte) (provider.JettyDesc, uint32, error) {
	rep, err := parseReply(b)
	if err != nil {
		return provider.JettyDesc{}, 0, err
	}
	if err := rep.err("port resolution"); err != nil {
		return provider.JettyDesc{}, 0, err
	}
	if len(b) < portAnswerSize || len(rep.members) != 0 {
		return provider.JettyDesc{}, 0, provider.Errorf(provider.ErrInvalid, "port answer of %d bytes, want %d", len(b), portAnswerSize)
	}
	var desc provider.JettyDesc
	if err := desc.UnmarshalBinary(b[replySize : replySize+provider.JettyDescSize]); err != nil {
		return provider.JettyDesc{}, 0, err
	}
	return desc, binary.BigEndian.Uint32(b[replySize+provider.JettyDescSize:]), nil
}
