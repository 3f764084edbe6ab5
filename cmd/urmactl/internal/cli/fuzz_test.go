package cli

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// FuzzDecode: `urmactl segment decode` and `jetty decode` take a descriptor
// pasted by a person or piped from another program, as an argument or on
// stdin, in hex or raw. Every spelling of the same bytes must decode the
// same, what is decoded must be exactly the descriptor UnmarshalBinary
// reads from those bytes, and no input decodes as both kinds.
func FuzzDecode(f *testing.F) {
	eid, _ := urma.ParseEID("::ffff:127.0.0.1")
	seg, _ := segment.Descriptor{EID: eid, UASID: 3, VA: 0x1000, Len: 8192,
		Access: segment.Read | segment.Write, TokenPolicy: segment.TokenPlainText, TokenID: 4}.MarshalBinary()
	jfr, _ := jetty.Descriptor{ID: urma.JettyID{EID: eid, UASID: 3, ID: 5}, Kind: jetty.KindJFR,
		Mode: urma.RM, TokenPolicy: segment.TokenPlainText}.MarshalBinary()
	for _, b := range [][]byte{seg, jfr} {
		h := hex.EncodeToString(b)
		f.Add(h, []byte(nil))
		f.Add("0X"+strings.ToUpper(h[:10])+" \n\t"+h[10:], []byte(nil))
		f.Add("", []byte(h+"\n"))
		f.Add(StdinArg, b)
		f.Add("", append(append([]byte{}, b...), '\n'))
	}
	f.Add("0x", []byte(nil))
	f.Add("abc", []byte(nil))
	f.Add("zz\u00e9", []byte(nil))
	f.Add("", []byte(" \n"))
	f.Add("", []byte{0xff, 0xfe})
	f.Fuzz(func(t *testing.T, arg string, stdin []byte) {
		if b, err := parseHex(arg); err == nil {
			h := hex.EncodeToString(b)
			for _, spelling := range []string{h, "0x" + strings.ToUpper(h), " " + strings.Join(strings.SplitAfter(h, "0"), "\n ")} {
				again, err := parseHex(spelling)
				require.NoError(t, err, "%q", spelling)
				require.Equal(t, b, again)
			}
		}

		for _, size := range []int{segment.DescriptorSize, jetty.DescriptorSize} {
			raw, err := readDescriptor(arg, bytes.NewReader(stdin), size)
			switch {
			case arg != "" && arg != StdinArg:
				want, werr := parseHex(arg)
				require.Equal(t, werr == nil, err == nil)
				require.Equal(t, want, raw)
			case len(stdin) > maxInput:
				require.Error(t, err)
			case err == nil && len(stdin) == size && !isText(stdin):
				require.Equal(t, stdin, raw)
			case err == nil:
				want, werr := parseHex(string(stdin))
				require.NoError(t, werr)
				require.Equal(t, want, raw)
			}
		}

		segRaw, _ := readDescriptor(arg, bytes.NewReader(stdin), segment.DescriptorSize)
		var segOut bytes.Buffer
		segErr := SegmentDecode(&segOut, SegmentDecodeOptions{Input: arg, Stdin: bytes.NewReader(stdin), Output: OutputJSON})
		if segErr == nil {
			var d segment.Descriptor
			require.NoError(t, d.UnmarshalBinary(segRaw))
			var got SegmentDescInfo
			require.NoError(t, json.Unmarshal(segOut.Bytes(), &got))
			require.Equal(t, SegmentDescOf(d), got)
			var again bytes.Buffer
			require.NoError(t, SegmentDecode(&again, SegmentDecodeOptions{Input: hex.EncodeToString(segRaw), Output: OutputJSON}))
			require.Equal(t, segOut.String(), again.String())
		}

		jettyRaw, _ := readDescriptor(arg, bytes.NewReader(stdin), jetty.DescriptorSize)
		var jettyOut bytes.Buffer
		jettyErr := JettyDecode(&jettyOut, JettyDecodeOptions{Input: arg, Stdin: bytes.NewReader(stdin), Output: OutputJSON})
		if jettyErr == nil {
			var d jetty.Descriptor
			require.NoError(t, d.UnmarshalBinary(jettyRaw))
			var got JettyDescInfo
			require.NoError(t, json.Unmarshal(jettyOut.Bytes(), &got))
			require.Equal(t, JettyDescOf(d), got)
			var again bytes.Buffer
			require.NoError(t, JettyDecode(&again, JettyDecodeOptions{Input: hex.EncodeToString(jettyRaw), Output: OutputJSON}))
			require.Equal(t, jettyOut.String(), again.String())
		}
		require.False(t, segErr == nil && jettyErr == nil, "decoded as both a segment and a jetty descriptor")
	})
}
