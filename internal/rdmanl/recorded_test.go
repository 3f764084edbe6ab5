package rdmanl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The files of testdata are the kernel's replies to dumps in the test VM
// (TestListVerbs with URMA_RDMANL_RECORD set), on rxe0 and siw0 after one
// process made a JFC, a JFR, a Jetty advised to that JFR, a UM JFR (rxe0
// only) and a 1 MiB segment: the PIDs are the threads of that process.

// replay decodes a recorded exchange: every message of the file, with the
// sequence number the file's first message carries.
func replay(t *testing.T, name string, cmd uint16, decode func(p []byte) error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(b), nlmsgHdrLen)
	ps, done, err := Messages(b, order.Uint32(b[8:]), msgType(cmd))
	require.NoError(t, err)
	require.True(t, done, "the recording ends the dump")
	require.NotEmpty(t, ps)
	for _, p := range ps {
		require.NoError(t, decode(p))
	}
}

func TestRecordedDevices(t *testing.T) {
	var devs []Device
	replay(t, "devices.nl", cmdGet, func(p []byte) (err error) { devs, err = DecodeDevices(devs, p); return })
	assert.Equal(t, []Device{{0, "rxe0", "roce"}, {1, "siw0", "iw"}, {2, "rxe_a", "roce"}, {3, "rxe_b", "roce"}}, devs)
}

func TestRecordedRXE(t *testing.T) {
	var qps []QP
	replay(t, "rxe0-qp.nl", cmdResQPGet, func(p []byte) (err error) { qps, err = DecodeQPs(qps, p); return })
	assert.Equal(t, []QP{
		{Port: 1, QPN: 18, Type: QPTypeUD, State: QPStateRTS, PDN: 2, Owner: Owner{PID: 177}},
		{Port: 1, QPN: 20, RemoteQPN: 21, HasRemote: true, Type: QPTypeRC, State: QPStateRTS, PDN: 2, Owner: Owner{PID: 180}},
		{Port: 1, QPN: 21, RemoteQPN: 20, HasRemote: true, Type: QPTypeRC, State: QPStateRTS, PDN: 2, Owner: Owner{PID: 180}},
		{Port: 1, QPN: 1, Type: QPTypeGSI, State: QPStateRTS, Owner: Owner{Kernel: "ib_core"}},
	}, qps)

	var srqs []SRQ
	replay(t, "rxe0-srq.nl", cmdResSRQ, func(p []byte) (err error) { srqs, err = DecodeSRQs(srqs, p); return })
	assert.Equal(t, []SRQ{
		{SRQN: 0, PDN: 2, QPs: []QPRange{{21, 21}}, Owner: Owner{PID: 215}},
		{SRQN: 1, PDN: 2, Owner: Owner{PID: 215}},
		{SRQN: 2, PDN: 2, QPs: []QPRange{{18, 18}}, Owner: Owner{PID: 215}},
	}, srqs)

	var cqs []CQ
	replay(t, "rxe0-cq.nl", cmdResCQGet, func(p []byte) (err error) { cqs, err = DecodeCQs(cqs, p); return })
	assert.Equal(t, []CQ{
		{CQN: 0, CQE: 1023, Users: 2, Owner: Owner{Kernel: "ib_core"}},
		{CQN: 2, CQE: 127, Users: 3, Context: 1, Owner: Owner{PID: 215}},
		{CQN: 3, CQE: 511, Users: 3, Context: 1, Owner: Owner{PID: 177}},
	}, cqs)

	var mrs []MR
	replay(t, "rxe0-mr.nl", cmdResMRGet, func(p []byte) (err error) { mrs, err = DecodeMRs(mrs, p); return })
	assert.Equal(t, []MR{
		{MRN: 0, RKey: 0x221, LKey: 0x221, HasKeys: true, Len: 4096, PDN: 2, Owner: Owner{PID: 179}},
		{MRN: 1, RKey: 0x3d5, LKey: 0x3d5, HasKeys: true, Len: 1 << 20, PDN: 2, Owner: Owner{PID: 179}},
		{MRN: 2, RKey: 0x43c, LKey: 0x43c, HasKeys: true, Len: 1280, PDN: 2, Owner: Owner{PID: 177}},
	}, mrs)
}

// TestRecordedSIW: soft-iWARP has no UD and no kernel QP, and reports a
// connected QP's peer number as 0.
func TestRecordedSIW(t *testing.T) {
	var qps []QP
	replay(t, "siw0-qp.nl", cmdResQPGet, func(p []byte) (err error) { qps, err = DecodeQPs(qps, p); return })
	assert.Equal(t, []QP{
		{Port: 1, QPN: 1, HasRemote: true, Type: QPTypeRC, State: QPStateRTS, PDN: 1, Owner: Owner{PID: 177}},
		{Port: 1, QPN: 2, HasRemote: true, Type: QPTypeRC, State: QPStateRTS, PDN: 1, Owner: Owner{PID: 177}},
	}, qps)

	var srqs []SRQ
	replay(t, "siw0-srq.nl", cmdResSRQ, func(p []byte) (err error) { srqs, err = DecodeSRQs(srqs, p); return })
	assert.Equal(t, []SRQ{
		{SRQN: 0, PDN: 1, QPs: []QPRange{{2, 2}}, Owner: Owner{PID: 179}},
		{SRQN: 1, PDN: 1, Owner: Owner{PID: 179}},
	}, srqs)

	var cqs []CQ
	replay(t, "siw0-cq.nl", cmdResCQGet, func(p []byte) (err error) { cqs, err = DecodeCQs(cqs, p); return })
	assert.Equal(t, []CQ{
		{CQN: 1, CQE: 64, Users: 2, Context: 1, Owner: Owner{PID: 179}},
		{CQN: 2, CQE: 256, Users: 2, Context: 1, Owner: Owner{PID: 177}},
	}, cqs)

	var mrs []MR
	replay(t, "siw0-mr.nl", cmdResMRGet, func(p []byte) (err error) { mrs, err = DecodeMRs(mrs, p); return })
	assert.Equal(t, []MR{
		{MRN: 0, RKey: 0xfed5e700, LKey: 0xfed5e700, HasKeys: true, Len: 4096, PDN: 1, Owner: Owner{PID: 179}},
		{MRN: 1, RKey: 0x8e831f00, LKey: 0x8e831f00, HasKeys: true, Len: 1 << 20, PDN: 1, Owner: Owner{PID: 177}},
	}, mrs)
}
