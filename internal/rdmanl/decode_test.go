package rdmanl

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func devAttrs() [][]byte {
	return [][]byte{aU32(attrDevIndex, 3), aStr(attrDevName, "rxe0")}
}

func TestDecodeQPs(t *testing.T) {
	p := payloadOf(append(devAttrs(), nest(attrResQP,
		nest(attrResQPEntry, aU32(attrPortIndex, 1), aU32(attrLQPN, 1), aStr(attrKernName, "ib_core"),
			aU32(attrSQPSN, 7), aU8(attrResType, 1), aU8(attrResState, 3)),
		nest(attrResQPEntry, aU32(attrPortIndex, 1), aU32(attrLQPN, 17), aU32(attrPDN, 2), aU32(attrResPID, 4242),
			aU32(attrRQPN, 18), aU32(attrRQPSN, 9), aU32(attrSQPSN, 10), aU8(attrPathMig, 3),
			aU8(attrResType, 2), aU8(attrResState, 6)),
		// Created and not yet modified: no port, no remote.
		nest(attrResQPEntry, aU32(attrLQPN, 19), aU32(attrPDN, 2), aU32(attrResPID, 4242),
			aU8(attrResType, 4), aU8(attrResState, 0)),
	))...)
	qps, err := DecodeQPs(nil, p)
	require.NoError(t, err)
	assert.Equal(t, []QP{
		{Port: 1, QPN: 1, Type: QPTypeGSI, State: QPStateRTS, Owner: Owner{Kernel: "ib_core"}},
		{Port: 1, QPN: 17, RemoteQPN: 18, HasRemote: true, Type: QPTypeRC, State: QPStateErr, PDN: 2, Owner: Owner{PID: 4242}},
		{QPN: 19, Type: QPTypeUD, State: QPStateReset, PDN: 2, Owner: Owner{PID: 4242}},
	}, qps)
	assert.Equal(t, "GSI RC UD RTS ERR RESET", qps[0].Type.String()+" "+qps[1].Type.String()+" "+qps[2].Type.String()+" "+
		qps[0].State.String()+" "+qps[1].State.String()+" "+qps[2].State.String())
	assert.Equal(t, "TYPE_7", QPType(7).String())
	assert.Equal(t, "STATE_9", QPState(9).String())
}

func TestDecodeCQsMRsSRQs(t *testing.T) {
	cqs, err := DecodeCQs(nil, payloadOf(append(devAttrs(), nest(attrResCQ,
		nest(attrResCQEntry, aU32(attrCQE, 127), aU64(attrUseCnt, 2), aU8(attrPollCtx, 1), aU8(attrResDim, 0),
			aU32(attrCQN, 1), aStr(attrKernName, "ib_core")),
		nest(attrResCQEntry, aU32(attrCQE, 2047), aU64(attrUseCnt, 0), aU8(attrResDim, 0), aU32(attrCQN, 5),
			aU32(attrCtxN, 1), aU32(attrResPID, 77)),
	))...))
	require.NoError(t, err)
	assert.Equal(t, []CQ{
		{CQN: 1, CQE: 127, Users: 2, Owner: Owner{Kernel: "ib_core"}},
		{CQN: 5, CQE: 2047, Context: 1, Owner: Owner{PID: 77}},
	}, cqs)

	mrs, err := DecodeMRs(nil, payloadOf(append(devAttrs(), nest(attrResMR,
		nest(attrResMREntry, aU32(attrRKey, 0x1234), aU32(attrLKey, 0x1235), aU64(attrMRLen, 1<<20),
			aU32(attrMRN, 4), aU32(attrPDN, 2), aU32(attrResPID, 77)),
		// Without CAP_NET_ADMIN the keys are left out.
		nest(attrResMREntry, aU64(attrMRLen, 4096), aU32(attrMRN, 5), aU32(attrPDN, 2), aU32(attrResPID, 77)),
	))...))
	require.NoError(t, err)
	assert.Equal(t, []MR{
		{MRN: 4, RKey: 0x1234, LKey: 0x1235, HasKeys: true, Len: 1 << 20, PDN: 2, Owner: Owner{PID: 77}},
		{MRN: 5, Len: 4096, PDN: 2, Owner: Owner{PID: 77}},
	}, mrs)

	srqs, err := DecodeSRQs(nil, payloadOf(append(devAttrs(), nest(attrResSRQ,
		nest(attrResSRQEntry, aU32(attrSRQN, 1), aU8(attrResType, 0), aU32(attrPDN, 2),
			nest(attrResQP,
				nest(attrResQPEntry, aU32(attrMinRange, 17), aU32(attrMaxRange, 19)),
				nest(attrResQPEntry, aU32(attrLQPN, 23))),
			aU32(attrResPID, 77)),
		nest(attrResSRQEntry, aU32(attrSRQN, 2), aU8(attrResType, 1), aU32(attrPDN, 2), aU32(attrCQN, 5),
			nest(attrResQP), aU32(attrResPID, 77)),
	))...))
	require.NoError(t, err)
	assert.Equal(t, []SRQ{
		{SRQN: 1, PDN: 2, QPs: []QPRange{{17, 19}, {23, 23}}, Owner: Owner{PID: 77}},
		{SRQN: 2, Type: 1, PDN: 2, CQN: 5, HasCQ: true, Owner: Owner{PID: 77}},
	}, srqs)
}

func TestDecodeDevices(t *testing.T) {
	devs, err := DecodeDevices(nil, payloadOf(aU32(attrDevIndex, 0), aStr(attrDevName, "siw0"),
		aU32(attrPortIndex, 1), aU64(6, 0x1122334455667788), aU8(attrNodeType, 4), aStr(attrDevProtocol, "iw")))
	require.NoError(t, err)
	assert.Equal(t, []Device{{Index: 0, Name: "siw0", Protocol: "iw"}}, devs)

	_, err = DecodeDevices(nil, payloadOf(aStr(attrDevName, "siw0")))
	require.ErrorIs(t, err, ErrMalformed)
}

func TestDecodeMalformed(t *testing.T) {
	for name, p := range map[string][]byte{
		"short u32":        payloadOf(nest(attrResQP, nest(attrResQPEntry, attr(attrLQPN, []byte{1, 2})))),
		"long u8":          payloadOf(nest(attrResQP, nest(attrResQPEntry, aU32(attrResType, 2)))),
		"length past end":  payloadOf(nest(attrResQP, nest(attrResQPEntry, aU32(attrLQPN, 1))))[:12],
		"length under hdr": {2, 0, 19, 0},
		"trailing bytes":   {0, 0},
	} {
		_, err := DecodeQPs(nil, p)
		assert.ErrorIs(t, err, ErrMalformed, name)
	}
	_, err := DecodeSRQs(nil, payloadOf(nest(attrResSRQ, nest(attrResSRQEntry,
		nest(attrResQP, nest(attrResQPEntry, aU32(attrMinRange, 9), aU32(attrMaxRange, 3)))))))
	assert.ErrorIs(t, err, ErrMalformed, "a range that ends before it starts")
	_, err = DecodeCQs(nil, payloadOf(nest(attrResCQ, nest(attrResCQEntry, aU32(attrUseCnt, 1)))))
	assert.ErrorIs(t, err, ErrMalformed, "a 64-bit count in 4 bytes")
	_, err = DecodeMRs(nil, payloadOf(nest(attrResMR, nest(attrResMREntry, aU32(attrResPID, 1)[:6]))))
	assert.Error(t, err)
}

func TestMessages(t *testing.T) {
	typ := msgType(cmdResQPGet)
	a := msg(typ, nlmFMulti, 5, aU32(attrDevIndex, 1))
	b := msg(typ, nlmFMulti, 5, aU32(attrDevIndex, 2))
	late := msg(typ, nlmFMulti, 4, aU32(attrDevIndex, 9))
	done := msg(nlmsgDone, nlmFMulti, 5, []byte{0, 0, 0, 0})

	ps, fin, err := Messages(append(append(append([]byte{}, late...), a...), b...), 5, typ)
	require.NoError(t, err)
	assert.False(t, fin)
	assert.Equal(t, [][]byte{a[nlmsgHdrLen:], b[nlmsgHdrLen:]}, ps, "the reply to an earlier request is skipped")

	ps, fin, err = Messages(done, 5, typ)
	require.NoError(t, err)
	assert.True(t, fin)
	assert.Empty(t, ps)

	// A single (not multipart) reply ends the exchange.
	_, fin, err = Messages(msg(typ, 0, 5, aU32(attrDevIndex, 1)), 5, typ)
	require.NoError(t, err)
	assert.True(t, fin)

	errno := func(e syscall.Errno) []byte {
		v := make([]byte, 4+nlmsgHdrLen)
		order.PutUint32(v, uint32(-int32(e)))
		return v
	}
	_, fin, err = Messages(msg(nlmsgError, 0, 5, errno(syscall.EOPNOTSUPP)), 5, typ)
	assert.True(t, fin)
	assert.ErrorIs(t, err, syscall.EOPNOTSUPP)
	_, _, err = Messages(msg(nlmsgDone, nlmFMulti, 5, errno(syscall.EPERM)[:4]), 5, typ)
	assert.ErrorIs(t, err, syscall.EPERM, "a dump that failed part way")
	_, fin, err = Messages(msg(nlmsgError, 0, 5, errno(0)), 5, typ)
	assert.NoError(t, err, "an acknowledgement")
	assert.True(t, fin)

	_, _, err = Messages(msg(msgType(cmdResCQGet), 0, 5), 5, typ)
	assert.ErrorIs(t, err, ErrMalformed, "a reply to another command")
	_, _, err = Messages(a[:10], 5, typ)
	assert.ErrorIs(t, err, ErrMalformed, "a cut header")
	_, _, err = Messages(a[:len(a)-1], 5, typ)
	assert.ErrorIs(t, err, ErrMalformed, "a cut body")
	_, _, err = Messages(msg(nlmsgError, 0, 5), 5, typ)
	assert.ErrorIs(t, err, ErrMalformed, "an error message without its code")
}

func TestRequest(t *testing.T) {
	b := request(cmdResSRQ, 7, 0, true)
	require.Len(t, b, 24)
	assert.Equal(t, uint32(24), order.Uint32(b))
	assert.Equal(t, uint16(5<<10|23), order.Uint16(b[4:]), "RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_SRQ_GET)")
	assert.Equal(t, uint16(0x301), order.Uint16(b[6:]), "NLM_F_REQUEST|NLM_F_DUMP")
	assert.Equal(t, uint32(7), order.Uint32(b[8:]))
	assert.Equal(t, aU32(attrDevIndex, 0), b[16:], "device index 0 is a device")

	b = request(cmdGet, 1, 0, false)
	assert.Len(t, b, nlmsgHdrLen, "a dump of every device names none")
}
