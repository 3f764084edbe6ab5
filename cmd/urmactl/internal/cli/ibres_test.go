package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/internal/rdmanl"
	"github.com/urma-go/sdk/provider"
)

func fieldsOf(s string) [][]string {
	var out [][]string
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		out = append(out, strings.Fields(l))
	}
	return out
}

// TestIBJettyList: the kernel's QPs, SRQs and CQs in URMA's words.
func TestIBJettyList(t *testing.T) {
	pid := uint32(os.Getpid())
	js := ibJettiesOf("rxe0",
		[]rdmanl.QP{
			{Port: 1, QPN: 1, Type: rdmanl.QPTypeGSI, State: rdmanl.QPStateRTS, Owner: rdmanl.Owner{Kernel: "ib_core"}},
			{Port: 1, QPN: 17, RemoteQPN: 18, HasRemote: true, Type: rdmanl.QPTypeRC, State: rdmanl.QPStateRTS, PDN: 2, Owner: rdmanl.Owner{PID: pid + 3, Process: pid}},
			{Port: 1, QPN: 19, Type: rdmanl.QPTypeUD, State: rdmanl.QPStateErr, PDN: 2, Owner: rdmanl.Owner{PID: pid}},
			{QPN: 20, Type: rdmanl.QPTypeRC, State: rdmanl.QPStateInit, PDN: 2, Owner: rdmanl.Owner{PID: pid}},
			{QPN: 21, Type: rdmanl.QPTypeRC, State: rdmanl.QPStateSQD, HasRemote: true, PDN: 2, Owner: rdmanl.Owner{PID: pid}},
		},
		[]rdmanl.SRQ{{SRQN: 3, PDN: 2, QPs: []rdmanl.QPRange{{First: 17, Last: 19}, {First: 23, Last: 23}}, Owner: rdmanl.Owner{PID: pid}}},
		[]rdmanl.CQ{{CQN: 5, CQE: 255, Users: 3, Owner: rdmanl.Owner{PID: pid}}},
	)
	p := strconv.Itoa(int(pid))

	var out bytes.Buffer
	require.NoError(t, FormatIBJettyList(&out, js, ""))
	assert.Equal(t, [][]string{
		{"DEVICE", "ID", "KIND", "MODE", "STATE", "DEPTH", "PID"},
		{"rxe0", "1", "JETTY", "GSI", "READY", "-", "-"},
		{"rxe0", "17", "JETTY", "RC", "READY", "-", p},
		{"rxe0", "19", "JETTY", "UM", "ERROR", "-", p},
		{"rxe0", "20", "JETTY", "RC", "RESET", "-", p},
		{"rxe0", "21", "JETTY", "RC", "SUSPENDED", "-", p},
		{"rxe0", "3", "JFR", "-", "-", "-", p},
		{"rxe0", "5", "JFC", "-", "-", "255", p},
	}, fieldsOf(out.String()))

	out.Reset()
	require.NoError(t, FormatIBJettyList(&out, js, OutputWide))
	r := fieldsOf(out.String())
	comm := processName(int(pid))
	assert.Equal(t, []string{"VERBS", "TYPE", "VERBS_STATE", "PORT", "REMOTE", "PD", "USERS", "QPS", "COMMAND"}, r[0][7:])
	assert.Equal(t, []string{"QP", "GSI", "RTS", "1", "-", "-", "-", "-", "[ib_core]"}, r[1][7:])
	assert.Equal(t, []string{"QP", "RC", "RTS", "1", "18", "2", "-", "-", comm}, r[2][7:])
	assert.Equal(t, []string{"QP", "RC", "INIT", "-", "-", "2", "-", "-", comm}, r[4][7:])
	assert.Equal(t, []string{"QP", "RC", "SQD", "-", "-", "2", "-", "-", comm}, r[5][7:], "an iWARP peer's QP number, 0, is none")
	assert.Equal(t, []string{"SRQ", "BASIC", "-", "-", "-", "2", "-", "17-19,23", comm}, r[6][7:])
	assert.Equal(t, []string{"CQ", "-", "-", "-", "-", "-", "3", "-", comm}, r[7][7:])

	out.Reset()
	require.NoError(t, FormatIBJettyList(&out, js[:2], OutputJSON))
	assert.JSONEq(t, `[
	  {"device":"rxe0","id":1,"kind":"JETTY","verbs":"QP","mode":"GSI","type":"GSI","state":"READY","verbs_state":"RTS",
	   "depth":0,"port":1,"pd":0,"users":0,"owner_pid":0,"owner_tid":0,"kernel":"ib_core"},
	  {"device":"rxe0","id":17,"kind":"JETTY","verbs":"QP","mode":"RC","type":"RC","state":"READY","verbs_state":"RTS",
	   "depth":0,"port":1,"remote_id":18,"pd":2,"users":0,"owner_pid":`+p+`,"owner_tid":`+strconv.Itoa(int(pid)+3)+`}]`, out.String())

	out.Reset()
	require.NoError(t, FormatIBJettyList(&out, nil, OutputJSON))
	assert.Equal(t, "[]\n", out.String())
	require.Error(t, FormatIBJettyList(&out, nil, "yaml"))
}

// TestIBSegmentList: MRs as segments; the keys only where the kernel
// gave them.
func TestIBSegmentList(t *testing.T) {
	segs := ibSegmentsOf("siw0", []rdmanl.MR{
		{MRN: 4, RKey: 0x1234, LKey: 0x1235, HasKeys: true, Len: 1 << 20, PDN: 2, Owner: rdmanl.Owner{PID: 77}},
		{MRN: 5, Len: 4096, PDN: 2, Owner: rdmanl.Owner{PID: 77}},
		{MRN: 6, Len: 8192, Owner: rdmanl.Owner{Kernel: "rdma_rxe"}},
	})
	var out bytes.Buffer
	require.NoError(t, FormatIBSegmentList(&out, segs, OutputTable))
	assert.Equal(t, [][]string{
		{"DEVICE", "ID", "LEN", "RKEY", "PID"},
		{"siw0", "4", "1048576", "0x1234", "77"},
		{"siw0", "5", "4096", "-", "77"},
		{"siw0", "6", "8192", "-", "-"},
	}, fieldsOf(out.String()))

	out.Reset()
	require.NoError(t, FormatIBSegmentList(&out, segs, OutputWide))
	r := fieldsOf(out.String())
	assert.Equal(t, []string{"LKEY", "PD", "COMMAND"}, r[0][5:])
	assert.Equal(t, []string{"0x1235", "2"}, r[1][5:7])
	assert.Equal(t, []string{"-", "-", "[rdma_rxe]"}, r[3][5:])

	out.Reset()
	require.NoError(t, FormatIBSegmentList(&out, segs[:2], OutputJSON))
	var back []IBSegmentInfo
	require.NoError(t, json.Unmarshal(out.Bytes(), &back))
	assert.Equal(t, segs[:2], back)
	assert.Contains(t, out.String(), `"rkey": null`, "a key the kernel withheld is null, not 0")
}

// TestIBListHost: on this machine's kernel jetty ls -d and segment ls -d
// either list the device or say why they cannot; an unknown device is a
// usage error that names the devices there are.
func TestIBListHost(t *testing.T) {
	var out, warn bytes.Buffer
	err := JettyList(&out, JettyListOptions{Device: "no-such-rdma-device", InspectOptions: InspectOptions{Warn: &warn}})
	require.Error(t, err)
	if errors.Is(err, provider.ErrNotSupported) {
		assert.Contains(t, err.Error(), "device no-such-rdma-device: rdmanl: this kernel has no RDMA netlink")
		err = SegmentList(&out, SegmentListOptions{Device: "rxe0"})
		require.ErrorIs(t, err, provider.ErrNotSupported)
		return
	}
	assert.ErrorIs(t, err, rdmanl.ErrNoDevice)
	assert.Equal(t, 2, ExitCode(err), "%v", err)
	assert.Contains(t, err.Error(), "loopback0 lists the loopback contexts")
}
