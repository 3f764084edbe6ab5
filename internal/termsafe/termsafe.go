// Package termsafe makes text that another process supplied safe to print
// on a terminal. A peer's names, ids and error messages reach urmactl's
// tables and messages; printed as they are, an escape sequence in one
// could retitle the window, rewrite the screen or forge a hyperlink, and a
// newline or tab could forge rows and columns of a listing.
package termsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// String returns s with every character a terminal might act on written
// as a Go escape instead (\x1b, \n, \u009b, \u202e...): the C0 controls
// (tab and newline included), DEL, the C1 controls, Unicode format
// characters such as the bidirectional overrides (which reorder what
// follows them on screen) and the line and paragraph separators; a byte
// that is not UTF-8 is written \xNN. An escape sequence loses its ESC and
// is left as harmless text. Everything else, non-ASCII letters included,
// is kept, and s comes back unchanged (without a copy) when it holds
// nothing to escape.
func String(s string) string { return escape(s, false) }

// Lines is String for text of several lines, such as joined errors: it
// keeps the newlines and escapes everything else String does.
func Lines(s string) string { return escape(s, true) }

func escape(s string, keepNewlines bool) string {
	i := firstUnsafe(s, keepNewlines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
		case unsafeRune(r, keepNewlines):
			// QuoteRune escapes exactly what it cannot print: all of
			// these. Its quotes are dropped.
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

// JSON rewrites, in JSON text that encoding/json produced, the characters
// String escapes that encoding/json leaves as they are (DEL, the C1
// controls, format characters, which JSON allows raw in strings) as \u
// escapes, so that printing the document is as safe as printing String's
// text while it decodes to the same values. Outside strings JSON text is
// ASCII, so every such character is inside one. It returns b itself when
// there is nothing to rewrite.
func JSON(b []byte) []byte {
	i := firstUnsafe(string(b), true)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r < 0x7f || !unsafeRune(r, true) {
			// encoding/json already escaped the C0 controls, and the
			// newlines of its indentation are structure.
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
			out = appendU(appendU(out, r1), r2)
		} else {
			out = appendU(out, r)
		}
		i += n
	}
	return out
}

// appendU appends the JSON escape \uXXXX of the UTF-16 unit u.
func appendU(b []byte, u rune) []byte {
	return append(b, '\\', 'u', hexDigits[u>>12&0xf], hexDigits[u>>8&0xf], hexDigits[u>>4&0xf], hexDigits[u&0xf])
}

// firstUnsafe is the index of the first byte escape must rewrite, or -1.
func firstUnsafe(s string, keepNewlines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && !(keepNewlines && c == '\n')) || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r, keepNewlines) {
			return i
		}
		i += n
	}
	return -1
}

// unsafeRune reports whether a terminal could act on r rather than show it.
func unsafeRune(r rune, keepNewlines bool) bool {
	switch {
	case r == '\n':
		return !keepNewlines
	case r < 0x20, r >= 0x7f && r <= 0x9f: // C0, DEL, C1
		return true
	case r == '\u2028', r == '\u2029': // line and paragraph separators
		return true
	}
	return unicode.Is(unicode.Cf, r) // format: bidi overrides, zero-width marks
}
