package rdmanl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The files of testdata are the kernel's replies to dumps in the test VM
// (TestListVerbs with URMA_RDMANL_RECORD set), on rxe0 after one process
// made a JFC, a JFR, a Jetty advised to that JFR and a UM JFR.

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
		{Port: 1, QPN: 18, Type: QPTypeUD, State: QPStateRTS, PDN: 2, Owner: Owner{PID: 184}},
		{Port: 1, QPN: 20, RemoteQPN: 21, HasRemote: true, Type: QPTypeRC, State: QPStateRTS, PDN: 2, Owner: Owner{PID: 177}},
		{Port: 1, QPN: 21, RemoteQPN: 20, HasRemote: true, Type: QPTypeRC, State: QPStateRTS, PDN: 2, Owner: Owner{PID: 184}},
		{Port: 1, QPN: 1, Type: QPTypeGSI, State: QPStateRTS, Owner: Owner{Kernel: "ib_core"}},
	}, qps)

	var srqs []SRQ
	replay(t, "rxe0-srq.nl", cmdResSRQ, func(p []byte) (err error) { srqs, err = DecodeSRQs(srqs, p); return })
	assert.Equal(t, []SRQ{
		{SRQN: 0, PDN: 2, QPs: []QPRange{{21, 21}}, Owner: Owner{PID: 177}},
		{SRQN: 1, PDN: 2, Owner: Owner{PID: 177}},
		{SRQN: 2, PDN: 2, QPs: []QPRange{{18, 18}}, Owner: Owner{PID: 177}},
	}, srqs)

	var cqs []CQ
	replay(t, "rxe0-cq.nl", cmdResCQGet, func(p []byte) (err error) { cqs, err = DecodeCQs(cqs, p); return })
	assert.Equal(t, []CQ{
		{CQN: 0, CQE: 1023, Users: 2, Owner: Owner{Kernel: "ib_core"}},
		{CQN: 2, CQE: 127, Users: 3, Context: 1, Owner: Owner{PID: 177}},
		{CQN: 3, CQE: 511, Users: 3, Context: 1, Owner: Owner{PID: 179}},
	}, cqs)
}
