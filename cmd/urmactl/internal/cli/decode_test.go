package cli_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/cmd/urmactl/internal/cli"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

func marshal(t *testing.T, d interface{ MarshalBinary() ([]byte, error) }) []byte {
	t.Helper()
	b, err := d.MarshalBinary()
	require.NoError(t, err)
	return b
}

func TestSegmentDecode(t *testing.T) {
	f := newFixture(t)
	d := f.shared.Descriptor()
	raw := marshal(t, d)
	require.Len(t, raw, segment.DescriptorSize)
	h := hex.EncodeToString(raw)
	want := fmt.Sprintf(""+
		"eid:          %s\n"+
		"uasid:        %d\n"+
		"va:           %#x\n"+
		"len:          8192\n"+
		"access:       READ|WRITE\n"+
		"token_policy: PLAIN_TEXT\n"+
		"token_id:     %d\n", f.ctx.EID(), f.ctx.UASID(), f.shared.VA(), d.TokenID)

	// The same descriptor in every accepted spelling.
	spaced := "0x" + strings.ToUpper(h[:16]) + " \n\t" + h[16:64] + "\n" + h[64:] + "\n"
	for name, opts := range map[string]cli.SegmentDecodeOptions{
		"arg":          {Input: h},
		"arg spaced":   {Input: spaced},
		"stdin hex":    {Input: "-", Stdin: strings.NewReader(h + "\n")},
		"stdin spaced": {Stdin: strings.NewReader(spaced)},
		"stdin binary": {Stdin: bytes.NewReader(raw)},
		"wide":         {Input: h, Output: cli.OutputWide},
	} {
		var b bytes.Buffer
		require.NoError(t, cli.SegmentDecode(&b, opts), name)
		assert.Equal(t, want, b.String(), name)
	}

	var b bytes.Buffer
	require.NoError(t, cli.SegmentDecode(&b, cli.SegmentDecodeOptions{Input: h, Output: cli.OutputJSON}))
	var got map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	assert.Equal(t, map[string]any{"eid": f.ctx.EID().String(), "uasid": float64(f.ctx.UASID()),
		"va": float64(d.VA), "len": 8192.0, "access": "READ|WRITE", "token_policy": "PLAIN_TEXT",
		"token_id": float64(d.TokenID)}, got)
	var info cli.SegmentDescInfo
	require.NoError(t, json.Unmarshal(b.Bytes(), &info))
	assert.Equal(t, cli.SegmentDescOf(d), info, "JSON keeps the full 64-bit va")
}

func TestJettyDecode(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		desc jetty.Descriptor
		kind string
		mode string
	}{
		{f.jfr.Descriptor(), "JFR", "RM"},
		{f.jetty.Descriptor(), "JETTY", "RC"},
	} {
		raw := marshal(t, tc.desc)
		require.Len(t, raw, jetty.DescriptorSize)
		want := fmt.Sprintf(""+
			"kind:         %s\n"+
			"id:           %d\n"+
			"eid:          %s\n"+
			"uasid:        %d\n"+
			"mode:         %s\n"+
			"token_policy: NONE\n", tc.kind, tc.desc.ID.ID, f.ctx.EID(), f.ctx.UASID(), tc.mode)
		var b bytes.Buffer
		require.NoError(t, cli.JettyDecode(&b, cli.JettyDecodeOptions{Input: hex.EncodeToString(raw)}))
		assert.Equal(t, want, b.String())
		b.Reset()
		require.NoError(t, cli.JettyDecode(&b, cli.JettyDecodeOptions{Stdin: bytes.NewReader(raw)}))
		assert.Equal(t, want, b.String())

		b.Reset()
		require.NoError(t, cli.JettyDecode(&b, cli.JettyDecodeOptions{Input: "0X" + hex.EncodeToString(raw), Output: "json"}))
		var got map[string]any
		require.NoError(t, json.Unmarshal(b.Bytes(), &got))
		assert.Equal(t, map[string]any{"kind": tc.kind, "id": float64(tc.desc.ID.ID), "eid": f.ctx.EID().String(),
			"uasid": float64(f.ctx.UASID()), "mode": tc.mode, "token_policy": "NONE"}, got)
	}
}

// validSegment is a descriptor built by hand, so the malformed variants
// below differ from it in exactly one field.
func validSegment(t *testing.T) []byte {
	eid, err := urma.ParseEID("10.0.0.1")
	require.NoError(t, err)
	return marshal(t, segment.Descriptor{EID: eid, UASID: 7, VA: 0x1000, Len: 64,
		Access: segment.Read, TokenPolicy: segment.TokenNone, TokenID: 3})
}

func validJetty(t *testing.T) []byte {
	eid, err := urma.ParseEID("10.0.0.1")
	require.NoError(t, err)
	return marshal(t, jetty.Descriptor{ID: urma.JettyID{EID: eid, UASID: 7, ID: 9},
		Kind: jetty.KindJFR, Mode: urma.RM})
}

func with(b []byte, i int, v byte) []byte {
	c := bytes.Clone(b)
	c[i] = v
	return c
}

func TestSegmentDecodeMalformed(t *testing.T) {
	seg, jet := validSegment(t), validJetty(t)
	var b bytes.Buffer
	require.NoError(t, cli.SegmentDecode(&b, cli.SegmentDecodeOptions{Input: hex.EncodeToString(seg)}))
	assert.Contains(t, b.String(), "eid:          ::ffff:10.0.0.1\n")

	for _, tc := range []struct {
		name string
		opts cli.SegmentDecodeOptions
		want string
		// invalid marks what UnmarshalBinary rejects: its errors keep
		// urma.ErrInvalid for callers that test with errors.Is.
		invalid bool
	}{
		{"bad hex", cli.SegmentDecodeOptions{Input: "55zz"}, `segment descriptor: bad hex: invalid character 'z'`, false},
		{"non-ASCII", cli.SegmentDecodeOptions{Input: "55é5"}, `segment descriptor: bad hex: invalid character 'é'`, false},
		{"odd hex", cli.SegmentDecodeOptions{Input: "0x555"}, "segment descriptor: bad hex: odd number of digits (3)", false},
		{"empty arg", cli.SegmentDecodeOptions{Input: " 0x "}, "segment descriptor: empty hex descriptor", false},
		{"short", cli.SegmentDecodeOptions{Input: hex.EncodeToString(seg[:47])}, "segment descriptor: 47 bytes, want 48", true},
		{"long", cli.SegmentDecodeOptions{Input: hex.EncodeToString(append(seg, 0))}, "segment descriptor: 49 bytes, want 48", true},
		{"magic", cli.SegmentDecodeOptions{Input: hex.EncodeToString(with(seg, 0, 'X'))}, `bad magic "XRSG"`, true},
		{"version", cli.SegmentDecodeOptions{Input: hex.EncodeToString(with(seg, 4, 2))}, "unsupported version 2", true},
		{"access bits", cli.SegmentDecodeOptions{Input: hex.EncodeToString(with(seg, 5, 0x42))}, "access: unknown bits 0x40", true},
		{"token policy", cli.SegmentDecodeOptions{Input: hex.EncodeToString(with(seg, 6, 9))}, "unknown token policy 9", true},
		{"reserved", cli.SegmentDecodeOptions{Input: hex.EncodeToString(with(seg, 7, 1))}, "reserved byte is 0x1", true},
		{"zero len", cli.SegmentDecodeOptions{Input: hex.EncodeToString(append(bytes.Clone(seg[:40]), 0, 0, 0, 0, 0, 0, 0, 0))}, "zero length", true},
		{"jetty desc", cli.SegmentDecodeOptions{Input: hex.EncodeToString(jet)}, "use urmactl jetty decode", true},
		{"no stdin", cli.SegmentDecodeOptions{}, "no descriptor given", false},
		{"empty stdin", cli.SegmentDecodeOptions{Stdin: strings.NewReader(" \n")}, "no descriptor on stdin", false},
		{"binary stdin", cli.SegmentDecodeOptions{Stdin: bytes.NewReader(seg[:40])}, "stdin holds 40 bytes of binary data; want hex text or a 48-byte descriptor", false},
		{"binary bad magic", cli.SegmentDecodeOptions{Stdin: bytes.NewReader(with(seg, 1, 0))}, `bad magic "U\x00SG"`, true},
		{"huge stdin", cli.SegmentDecodeOptions{Stdin: strings.NewReader(strings.Repeat("0", 1<<20))}, "stdin holds more than 65536 bytes", false},
		{"output", cli.SegmentDecodeOptions{Input: hex.EncodeToString(seg), Output: "yaml"}, `invalid output format "yaml"`, false},
	} {
		b.Reset()
		err := cli.SegmentDecode(&b, tc.opts)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
		assert.Empty(t, b.String(), tc.name)
		if tc.invalid {
			assert.ErrorIs(t, err, urma.ErrInvalid, tc.name)
		}
	}
}

func TestJettyDecodeMalformed(t *testing.T) {
	seg, jet := validSegment(t), validJetty(t)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"short", jet[:31], "jetty descriptor: 31 bytes, want 32"},
		{"magic", with(jet, 3, 'G'), `bad magic "URJG"`},
		{"version", with(jet, 4, 0), "unsupported version 0"},
		{"kind", with(jet, 5, 3), "unknown kind 3"},
		{"mode", with(jet, 6, 3), "unknown transport mode 0x3"},
		{"token policy", with(jet, 7, 4), "unknown token policy 4"},
		{"segment desc", seg, "segment descriptor: use urmactl segment decode"},
	} {
		var b bytes.Buffer
		err := cli.JettyDecode(&b, cli.JettyDecodeOptions{Input: hex.EncodeToString(tc.in)})
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
		assert.ErrorIs(t, err, urma.ErrInvalid, tc.name)
		assert.Empty(t, b.String(), tc.name)
	}
	var b bytes.Buffer
	err := cli.JettyDecode(&b, cli.JettyDecodeOptions{Input: "nothex"})
	require.Error(t, err)
	assert.Equal(t, `jetty descriptor: bad hex: invalid character 'n'`, err.Error())
}
