package cli

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// maxInput bounds what a decode command reads from stdin: a descriptor in
// hex with generous whitespace is far smaller, and an endless pipe must not
// exhaust memory.
const maxInput = 64 << 10

// StdinArg is the argument that asks a decode command to read stdin.
const StdinArg = "-"

// readDescriptor returns the bytes of a marshalled descriptor of size bytes.
// arg is the command-line argument: hex text, or "" / "-" for stdin. Stdin
// may hold hex text or the raw descriptor itself.
func readDescriptor(arg string, stdin io.Reader, size int) ([]byte, error) {
	if arg != "" && arg != StdinArg {
		return parseHex(arg)
	}
	if stdin == nil {
		return nil, errors.New("no descriptor given: pass it as HEX or on stdin")
	}
	in, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if len(in) > maxInput {
		return nil, fmt.Errorf("stdin holds more than %d bytes; a descriptor is %d bytes", maxInput, size)
	}
	// A marshalled descriptor always holds control bytes (its version is
	// 1), so it is never mistaken for hex text that happens to be as long.
	if len(in) == size && !isText(in) {
		return in, nil
	}
	if len(bytes.TrimSpace(in)) == 0 {
		return nil, errors.New("no descriptor on stdin")
	}
	if !isText(in) {
		return nil, fmt.Errorf("stdin holds %d bytes of binary data; want hex text or a %d-byte descriptor", len(in), size)
	}
	return parseHex(string(in))
}

// parseHex decodes hex digits, ignoring whitespace anywhere (so hexdump-like
// groups and line breaks paste cleanly) and an optional 0x prefix.
func parseHex(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	if s == "" {
		return nil, errors.New("empty hex descriptor")
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		// hex reports the offending byte, which is only part of a
		// multi-byte character; name the whole character instead.
		if i := strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune("0123456789abcdefABCDEF", r) }); i >= 0 {
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, fmt.Errorf("bad hex: invalid character %q", r)
		}
		if errors.Is(err, hex.ErrLength) {
			return nil, fmt.Errorf("bad hex: odd number of digits (%d)", len(s))
		}
		return nil, fmt.Errorf("bad hex: %w", err)
	}
	return b, nil
}

// isText reports whether b is printable ASCII or whitespace, i.e. could be
// hex typed or piped by a person.
func isText(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\n' && c != '\r' && c != '\t' {
			return false
		}
	}
	return true
}

// decodeInput returns the descriptor argument of a decode command. Without
// one the command reads stdin, but not from a terminal: a person who forgot
// the argument would otherwise face a silent wait.
func decodeInput(cmd *cobra.Command, args []string) (string, error) {
	if len(args) > 0 {
		return args[0], nil
	}
	if f, ok := cmd.InOrStdin().(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return "", usage(fmt.Errorf("no descriptor given: pass it as HEX, or pipe it in (use %q to read a terminal)", StdinArg))
		}
	}
	return StdinArg, nil
}
