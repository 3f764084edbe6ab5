package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// TestBinaryInspect runs segment ls, jetty ls and the decoders of the real
// binary against a context of the test process, in a runtime directory of
// the test's own: shared defaults may hold contexts of other runs.
func TestBinaryInspect(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := urmactl(t)

	// A subdirectory, created 0700 by the provider; it is set before the
	// context opens because the provider reads it then.
	dir := filepath.Join(socketDir(t), "rt")
	t.Setenv(loopback.EnvRuntimeDir, dir)
	env := []string{loopback.EnvRuntimeDir + "=" + dir}
	dev, err := urma.DeviceByName(loopback.DeviceName)
	require.NoError(t, err)
	ctx, err := urma.Open(dev, 1, nil)
	require.NoError(t, err)
	defer ctx.Close()
	seg, err := segment.Alloc(ctx, 1<<16, segment.Config{Access: segment.Read | segment.Write | segment.Atomic})
	require.NoError(t, err)
	jfc, err := jetty.NewJFC(ctx, jetty.JFCConfig{})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(ctx, jetty.JFRConfig{Depth: 32, Mode: urma.UM, JFC: jfc})
	require.NoError(t, err)
	require.NoError(t, jfr.Recv(seg.SGE(0, 128), 1))

	eid, uasid, pid := ctx.EID().String(), fmt.Sprint(ctx.UASID()), fmt.Sprint(os.Getpid())
	require.Equal(t, "::ffff:127.0.0.2", eid)

	t.Run("segment ls", func(t *testing.T) {
		for _, args := range [][]string{{"segment", "ls"}, {"segment", "list"}, {"segment", "ls", "--dir", dir}} {
			out, errOut, code := runWith(t, bin, env, nil, args...)
			require.Equal(t, 0, code, errOut)
			assert.Empty(t, errOut)
			assert.Equal(t, [][]string{
				{"EID", "UASID", "VA", "LEN", "ACCESS", "TOKEN", "MEMORY", "PID"},
				{eid, uasid, fmt.Sprintf("%#x", seg.VA()), "65536", "READ|WRITE|ATOMIC",
					fmt.Sprintf("NONE/%d", seg.Descriptor().TokenID), "shared", pid},
			}, fields(out))
		}
	})

	t.Run("segment ls json", func(t *testing.T) {
		out, errOut, code := runWith(t, bin, env, nil, "segment", "ls", "-o", "json")
		require.Equal(t, 0, code, errOut)
		var segs []loopback.SegmentInfo
		require.NoError(t, json.Unmarshal([]byte(out), &segs))
		require.Len(t, segs, 1)
		assert.Equal(t, seg.VA(), segs[0].VA)
		assert.Equal(t, uint64(1<<16), segs[0].Len)
		assert.Equal(t, os.Getpid(), segs[0].OwnerPID)
		assert.Equal(t, "shared", segs[0].Memory)
	})

	t.Run("jetty ls", func(t *testing.T) {
		out, errOut, code := runWith(t, bin, env, nil, "jetty", "list")
		require.Equal(t, 0, code, errOut)
		assert.Equal(t, [][]string{
			{"EID", "UASID", "ID", "KIND", "MODE", "STATE", "DEPTH", "OUTSTANDING", "PID"},
			{eid, uasid, fmt.Sprint(jfr.Descriptor().ID.ID), "jfr", "UM", "READY", "32", "1", pid},
		}, fields(out))

		out, _, code = runWith(t, bin, env, nil, "jetty", "ls", "-o", "json")
		require.Equal(t, 0, code)
		var js []loopback.JettyInfo
		require.NoError(t, json.Unmarshal([]byte(out), &js))
		require.Len(t, js, 1)
		assert.Equal(t, "jfr", js[0].Kind)
		assert.Equal(t, 1, js[0].Outstanding)
	})

	t.Run("empty dir", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "empty")
		require.NoError(t, os.Mkdir(empty, 0o700))
		out, errOut, code := run(t, bin, "segment", "ls", "--dir", empty)
		require.Equal(t, 0, code, errOut)
		assert.Equal(t, "EID  UASID  VA  LEN  ACCESS  TOKEN  MEMORY  PID\n", out)
		out, _, code = run(t, bin, "jetty", "ls", "--dir", empty, "-o", "json")
		require.Equal(t, 0, code)
		assert.Equal(t, "[]\n", out)
	})

	t.Run("open dir", func(t *testing.T) {
		// t.TempDir is 0755: urma.Open would refuse it, and so does ls.
		open := t.TempDir()
		out, errOut, code := run(t, bin, "segment", "ls", "--dir", open)
		assert.Equal(t, 1, code)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "urmactl: loopback runtime directory "+open+" has mode 0755; it must be 0700")
	})

	t.Run("missing dir", func(t *testing.T) {
		out, errOut, code := run(t, bin, "jetty", "ls", "--dir", filepath.Join(dir, "nope"))
		assert.Equal(t, 1, code)
		assert.Empty(t, out)
		assert.Equal(t, "urmactl: loopback runtime directory "+filepath.Join(dir, "nope")+" does not exist\n", errOut)
	})

	t.Run("decode", func(t *testing.T) {
		raw, err := seg.Descriptor().MarshalBinary()
		require.NoError(t, err)
		for _, in := range []struct {
			args  []string
			stdin []byte
		}{
			{[]string{"segment", "decode", hex.EncodeToString(raw)}, nil},
			{[]string{"segment", "decode"}, raw},
			{[]string{"segment", "decode", "-"}, []byte("0x" + hex.EncodeToString(raw) + "\n")},
		} {
			out, errOut, code := runWith(t, bin, nil, in.stdin, in.args...)
			require.Equal(t, 0, code, errOut)
			assert.Equal(t, fmt.Sprintf("eid:          %s\nuasid:        %s\nva:           %#x\nlen:          65536\n"+
				"access:       READ|WRITE|ATOMIC\ntoken_policy: NONE\ntoken_id:     %d\n",
				eid, uasid, seg.VA(), seg.Descriptor().TokenID), out)
		}

		jraw, err := jfr.Descriptor().MarshalBinary()
		require.NoError(t, err)
		out, errOut, code := runWith(t, bin, nil, jraw, "jetty", "decode", "-o", "json")
		require.Equal(t, 0, code, errOut)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		assert.Equal(t, map[string]any{"kind": "JFR", "id": float64(jfr.Descriptor().ID.ID), "eid": eid,
			"uasid": float64(ctx.UASID()), "mode": "UM", "token_policy": "NONE"}, got)
	})

	t.Run("decode malformed", func(t *testing.T) {
		raw, err := seg.Descriptor().MarshalBinary()
		require.NoError(t, err)
		raw[4] = 9
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"segment", "decode", "xyz"}, "urmactl: segment descriptor: bad hex: invalid character 'x'\n"},
			{[]string{"segment", "decode", "0011"}, "urmactl: segment descriptor: 2 bytes, want 48: invalid argument\n"},
			{[]string{"segment", "decode", hex.EncodeToString(raw)}, "urmactl: segment descriptor: unsupported version 9: invalid argument\n"},
			{[]string{"jetty", "decode", "-"}, "urmactl: jetty descriptor: no descriptor on stdin\n"},
		} {
			out, errOut, code := run(t, bin, tc.args...)
			assert.Equal(t, 1, code, tc.args)
			assert.Empty(t, out, tc.args)
			assert.Equal(t, tc.want, errOut, tc.args)
		}
	})
}

// fields splits a table into its lines' fields.
func fields(s string) [][]string {
	var out [][]string
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		out = append(out, strings.Fields(l))
	}
	return out
}

// socketDir is a temporary directory that can hold unix sockets. In the
// test VM (URMA_VM=1, see test/vm) the temporary directory is the host's,
// shared over 9p, which cannot: there it is one in the guest's own /run.
func socketDir(t *testing.T) string {
	if os.Getenv("URMA_VM") != "1" {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("/run", "urmactl-test-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
