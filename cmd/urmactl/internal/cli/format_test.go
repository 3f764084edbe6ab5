package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/urma"
)

func sampleDevice() DeviceInfo {
	return DeviceInfo{
		Name: "dev0", Provider: "fake", Transport: urma.TransportRoCE, GUID: formatGUID(0x0102030405060708),
		MaxJFC: 1, MaxJFS: 2, MaxJFR: 3, MaxJetty: 4, MaxJFCDepth: 5, MaxJFSDepth: 6, MaxJFRDepth: 7,
		MaxJFSSGE: 8, MaxJFRSGE: 9, MaxInline: 10, MaxMsgSize: 11,
		AtomicOps:  atomicList(urma.AtomicOpsOf(urma.OpCAS, urma.OpFAdd)),
		AtomicSize: 8, Modes: modeList(urma.RM | urma.UM), MaxEIDs: 2,
		Ports: []PortInfo{{Port: 1, State: "ACTIVE", MTU: 1024, SpeedMbps: 100000}, {Port: 2, State: "DOWN", MTU: 4096}},
		EIDs:  []EIDInfo{{Index: 0, EID: "::ffff:10.0.0.1"}, {Index: 1, EID: "fe80::1"}},
	}
}

func TestFormatGUID(t *testing.T) {
	assert.Equal(t, "0102:0304:0506:0708", formatGUID(0x0102030405060708))
	assert.Equal(t, "0000:0000:0000:0000", formatGUID(0))
}

func TestModeAndAtomicLists(t *testing.T) {
	assert.Equal(t, []string{"RM", "RC", "UM"}, modeList(urma.RM|urma.RC|urma.UM))
	assert.Equal(t, []string{}, modeList(0))
	assert.Equal(t, []string{"CAS", "SWAP", "FADD", "FSUB", "FAND", "FOR", "FXOR"},
		atomicList(urma.AtomicOpsOf(urma.OpCAS, urma.OpSwap, urma.OpFAdd, urma.OpFSub, urma.OpFAnd, urma.OpFOr, urma.OpFXor)))
	assert.Equal(t, "none", joinOr(nil, ","))
}

func TestPortsState(t *testing.T) {
	assert.Equal(t, "-", portsState(nil))
	assert.Equal(t, "ACTIVE", portsState([]PortInfo{{State: "ACTIVE"}, {State: "ACTIVE"}}))
	assert.Equal(t, "ACTIVE,DOWN", portsState(sampleDevice().Ports))
}

func TestFormatDeviceListTable(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, FormatDeviceList(&b, []DeviceInfo{sampleDevice()}, ""))
	want := "" +
		"NAME  PROVIDER  TRANSPORT  EIDS  PORTS  STATE\n" +
		"dev0  fake      RoCE       2     2      ACTIVE,DOWN\n"
	assert.Equal(t, want, b.String())
}

func TestFormatDeviceListWide(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, FormatDeviceList(&b, []DeviceInfo{sampleDevice()}, OutputWide))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, []string{"NAME", "PROVIDER", "TRANSPORT", "EIDS", "PORTS", "STATE", "MAX_MSG", "ATOMICS", "MODES"},
		strings.Fields(lines[0]))
	assert.Equal(t, []string{"dev0", "fake", "RoCE", "2", "2", "ACTIVE,DOWN", "11", "CAS,FADD", "RM,UM"},
		strings.Fields(lines[1]))
}

func TestFormatDeviceListJSON(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, FormatDeviceList(&b, nil, OutputJSON))
	assert.Equal(t, "[]\n", b.String())

	b.Reset()
	require.NoError(t, FormatDeviceList(&b, []DeviceInfo{sampleDevice()}, OutputJSON))
	var got []map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	require.Len(t, got, 1)
	for _, k := range []string{"name", "provider", "transport", "guid", "max_jfc", "max_jfs", "max_jfr",
		"max_jetty", "max_jfc_depth", "max_jfs_depth", "max_jfr_depth", "max_jfs_sge", "max_jfr_sge",
		"max_inline", "max_msg_size", "atomic_ops", "atomic_size", "modes", "max_eids", "ports", "eids",
		"max_read_sge", "max_um_msg_size", "imm_data", "rnr", "remote_status", "solicited_events", "solicited_in_cr", "views", "sig_offload",
		"rx_threshold", "error_suspend", "err_timeout", "order_cap", "map_imports", "send_invalidate", "write_notify",
		"max_jetty_grp", "max_jetty_in_grp"} {
		assert.Contains(t, got[0], k)
	}
	assert.Len(t, got[0], 39, "unexpected extra keys")
	port := got[0]["ports"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"port": 1.0, "state": "ACTIVE", "mtu": 1024.0, "speed_mbps": 100000.0}, port)
	eid := got[0]["eids"].([]any)[1].(map[string]any)
	assert.Equal(t, map[string]any{"index": 1.0, "eid": "fe80::1"}, eid)
}

func TestFormatDevice(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, FormatDevice(&b, sampleDevice(), OutputTable))
	out := b.String()
	for _, want := range []string{
		"name:             dev0\n", "guid:             0102:0304:0506:0708\n",
		"max_jfc_depth:    5\n", "max_jfs_depth:    6\n", "max_jfr_depth:    7\n",
		"max_jfs_sge:      8\n", "max_jfr_sge:      9\n", "max_inline:       10\n", "max_msg_size:     11\n",
		"atomic_ops:       CAS,FADD\n", "atomic_size:      8\n", "modes:            RM,UM\n",
		"PORT  STATE   MTU   SPEED\n", "1     ACTIVE  1024  100000 Mb/s\n", "2     DOWN    4096  -\n",
		"INDEX  EID\n", "0      ::ffff:10.0.0.1\n", "1      fe80::1\n",
	} {
		assert.Contains(t, out, want)
	}
	// wide is accepted and prints the same.
	var w bytes.Buffer
	require.NoError(t, FormatDevice(&w, sampleDevice(), OutputWide))
	assert.Equal(t, out, w.String())
}

func TestFormatDeviceJSON(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, FormatDevice(&b, sampleDevice(), OutputJSON))
	var got DeviceInfo
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	assert.Equal(t, sampleDevice(), got)
}

func TestBadOutput(t *testing.T) {
	var b bytes.Buffer
	err := FormatDeviceList(&b, nil, "yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `invalid output format "yaml"`)
	require.Error(t, FormatDevice(&b, sampleDevice(), "xml"))
	require.Error(t, DeviceList(&b, DeviceListOptions{Output: "yaml"}))
	require.Error(t, DeviceShow(&b, DeviceShowOptions{Name: "x", Output: "yaml"}))
	assert.Empty(t, b.String())
}

// Device names and EIDs come from the providers, which read them from the
// system: they are printed escaped like a peer's strings.
func TestFormatDeviceEscapes(t *testing.T) {
	d := sampleDevice()
	d.Name, d.Provider = "dev\x1b[2J", "fake\nrow"
	d.EIDs[0].EID = "\u009b0m"
	d.Ports[0].State = "UP\r"
	var b bytes.Buffer
	require.NoError(t, FormatDeviceList(&b, []DeviceInfo{d}, OutputWide))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 2, b.String())
	assert.Equal(t, []string{`dev\x1b[2J`, `fake\nrow`, "RoCE", "2", "2", `UP\r,DOWN`}, strings.Fields(lines[1])[:6])

	b.Reset()
	require.NoError(t, FormatDevice(&b, d, OutputTable))
	assert.Contains(t, b.String(), "name:             dev\\x1b[2J\n")
	assert.Contains(t, b.String(), "1     UP\\r   1024  100000 Mb/s\n")
	assert.Contains(t, b.String(), "0      \\u009b0m\n")
	for _, r := range b.String() {
		assert.False(t, (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f), "%U printed raw", r)
	}
}
