package sysfs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/sysfs"
)

// fakeTree writes files (path relative to root: content) under a new root.
func fakeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return root
}

func TestPortCounters(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"rxe0/ports/1/counters/port_xmit_data":           "1234\n",
		"rxe0/ports/1/counters/port_rcv_packets":         "  77 \n",
		"rxe0/ports/1/counters/symbol_error":             "0\n",
		"rxe0/ports/1/counters/unreadable":               "N/A\n",
		"rxe0/ports/1/counters/too_long":                 "1111111111111111111111111111111111111111111111111111111111111111111111\n",
		"rxe0/ports/1/hw_counters/rcvd_rnr_err":          "3\n",
		"rxe0/ports/1/hw_counters/send_rnr_err":          "0x10\n",
		"rxe0/ports/1/hw_counters/rdma_sends":            "18446744073709551615\n",
		"rxe0/ports/1/hw_counters/lifespan":              "10\n",
		"rxe0/ports/1/hw_counters/sub/ignored":           "5\n",
		"rxe0/ports/2/counters/port_xmit_data":           "1\n",
		"siw0/ports/1/state":                             "4: ACTIVE\n",
		"rxe0/ports/1/counters/negative":                 "-1\n",
		"rxe0/ports/1/counters/empty":                    "",
		"rxe0/ports/1/hw_counters/duplicate_request_cnt": "9",
	})
	pc, err := sysfs.PortCounters(root, "rxe0", 1)
	require.NoError(t, err)
	require.Equal(t, 1, pc.Port)
	require.Equal(t, map[string]uint64{"port_xmit_data": 1234, "port_rcv_packets": 77, "symbol_error": 0}, pc.Counters)
	require.Equal(t, map[string]uint64{"rcvd_rnr_err": 3, "send_rnr_err": 16, "rdma_sends": 1<<64 - 1,
		"lifespan": 10, "duplicate_request_cnt": 9}, pc.HWCounters)

	pc, err = sysfs.PortCounters(root, "rxe0", 2)
	require.NoError(t, err)
	require.Equal(t, map[string]uint64{"port_xmit_data": 1}, pc.Counters)
	require.Empty(t, pc.HWCounters, "a port without hw_counters has none")

	pc, err = sysfs.PortCounters(root, "siw0", 1)
	require.NoError(t, err, "siw has no counters directories")
	require.Empty(t, pc.Counters)
	require.Empty(t, pc.HWCounters)

	ports, err := sysfs.Ports(root, "rxe0")
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, ports)
}

func TestPortCountersErrors(t *testing.T) {
	root := fakeTree(t, map[string]string{"rxe0/ports/1/counters/x": "1\n"})
	_, err := sysfs.PortCounters(root, "rxe0", 3)
	require.ErrorIs(t, err, provider.ErrNotFound)
	_, err = sysfs.PortCounters(root, "mlx5_9", 1)
	require.ErrorIs(t, err, provider.ErrNotFound)
	_, err = sysfs.Ports(root, "mlx5_9")
	require.ErrorIs(t, err, provider.ErrNotFound)
	for _, bad := range []string{"", "..", ".", "a/b", "x\x00"} {
		_, err = sysfs.PortCounters(root, bad, 1)
		require.ErrorIs(t, err, provider.ErrInvalid, "%q", bad)
		_, err = sysfs.Ports(root, bad)
		require.ErrorIs(t, err, provider.ErrInvalid, "%q", bad)
	}
	_, err = sysfs.PortCounters(root, "rxe0", 0)
	require.ErrorIs(t, err, provider.ErrInvalid)
}

func TestParseCounter(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "42\n": 42, " 0x1f\n": 31, "0XFF": 255} {
		v, ok := sysfs.ParseCounter(in)
		require.True(t, ok, "%q", in)
		require.Equal(t, want, v, "%q", in)
	}
	for _, in := range []string{"", "\n", "-1", "1.5", "0x", "abc", "18446744073709551616"} {
		_, ok := sysfs.ParseCounter(in)
		require.False(t, ok, "%q", in)
	}
}
