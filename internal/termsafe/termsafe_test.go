package termsafe

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostile holds what a peer could send to act on a terminal: ESC and CSI
// sequences (7- and 8-bit), an OSC title and hyperlink, BEL, a carriage
// return that overwrites a line, newlines and tabs that forge rows and
// columns, DEL, a bidi override, a line separator, a bad UTF-8 byte.
var hostile = []struct{ in, want string }{
	{"\x1b[2J\x1b[31mred", `\x1b[2J\x1b[31mred`},
	{"\u009b31mred", `\u009b31mred`},
	{"\x1b]0;title\x07", `\x1b]0;title\a`},
	{"\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;http://evil\x1b\link\x1b]8;;\x1b\`},
	{"ok\rFAKE", `ok\rFAKE`},
	{"a\nb\tc", `a\nb\tc`},
	{"del\x7f", `del\x7f`},
	{"abc\u202edef", `abc\u202edef`},
	{"x\u2028y", `x\u2028y`},
	{"bad\xffutf8\xc2", `bad\xffutf8\xc2`},
	{"\x00nul", `\x00nul`},
}

func TestStringEscapesWhatATerminalActsOn(t *testing.T) {
	for _, tc := range hostile {
		got := String(tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
		for _, r := range got {
			assert.True(t, r >= 0x20 && r != 0x7f && (r < 0x80 || r > 0x9f), "%q kept %U", tc.in, r)
		}
	}
}

func TestStringKeepsPrintableText(t *testing.T) {
	for _, s := range []string{"", "::ffff:127.0.0.1", "READ|WRITE", "café 日本 ü", `back\slash`, "a b"} {
		assert.Equal(t, s, String(s))
		assert.Zero(t, testing.AllocsPerRun(10, func() { _ = String(s) }), "%q is returned without a copy", s)
	}
}

func TestLinesKeepsNewlines(t *testing.T) {
	assert.Equal(t, "first\nsecond \\x1b[2J\\t", Lines("first\nsecond \x1b[2J\t"))
	assert.Equal(t, "a\nb", Lines("a\nb"))
}

// JSON escapes what encoding/json leaves raw (DEL, C1, format
// characters) and decodes to the same values.
func TestJSONEscapesWhatEncodingJSONLeaves(t *testing.T) {
	in := map[string]string{"k": "csi\u009b31m del\x7f bidi\u202e esc\x1b tag\U000E0041 é"}
	raw, err := json.MarshalIndent(in, "", "  ")
	require.NoError(t, err)
	require.Contains(t, string(raw), "\u009b", "encoding/json leaves C1 raw")

	got := JSON(raw)
	for _, r := range string(got) {
		assert.True(t, r == '\n' || (r >= 0x20 && r != 0x7f && (r < 0x80 || r > 0x9f) && r != '\u202e'), "kept %U", r)
	}
	assert.Contains(t, string(got), `csi\u009b31m del\u007f bidi\u202e esc\u001b tag\udb40\udc41 é`)
	var back map[string]string
	require.NoError(t, json.Unmarshal(got, &back))
	assert.Equal(t, in, back)

	plain := []byte(`{"a": "b"}`)
	assert.Equal(t, &plain[0], &JSON(plain)[0], "nothing to rewrite: the same slice")
}
