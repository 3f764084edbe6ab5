package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guidePath is the tutorial whose snippets this program runs.
const guidePath = "../../docs/guide.md"

// TestRun runs every step and checks the line each one prints.
func TestRun(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, run(&b))
	want := []string{
		`open: loopback/loopback0, owner ::ffff:127\.0\.0\.1, peer ::ffff:127\.0\.0\.2`,
		`segments: owner 4096 bytes READ\|WRITE\|ATOMIC, peer 4096 bytes LOCAL_ONLY`,
		`queues: owner JFC 64 <- JFR 64, peer JFC 64 <- JFS 64 RM`,
		`descriptors: segment 48 bytes, jfr 32 bytes`,
		`import: segment of 4096 bytes, jfr \d+`,
		`write: "hello, owner" in the owner's segment`,
		`read: "hello, owner" back from the owner's segment`,
		`send: "ping!" received, receive 10`,
		`fadd: old value 40, counter now 42`,
		`map: "stored by the importer" in the owner's segment, counter 42`,
		`event: woken, "wake" received`,
		`errors: wrong token: .*wrong token.*: permission denied`,
		`errors: post: .*request 1: FADD .*: invalid argument`,
		`errors: record: .*WRITE completed with REM_ACCESS_ABORT_ERR \(ctx 0x8\)`,
		`async: JFS_ERR on the peer's JFS, acked`,
		`ping: the owner's context answered`,
		`close: ok`,
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, len(want), "output:\n%s", b.String())
	for i, re := range want {
		assert.Regexp(t, "^"+re+"$", lines[i])
	}
}

// TestRunTwice checks that the steps leave nothing behind that a second
// run in the same process would trip over.
func TestRunTwice(t *testing.T) {
	for range 2 {
		require.NoError(t, run(new(bytes.Buffer)))
	}
}

// TestGuideSnippets keeps docs/guide.md and this program in step: every
// ```go block of the guide appears verbatim in the program's source, and
// every guide:begin/guide:end region of the source is a block of the guide.
func TestGuideSnippets(t *testing.T) {
	doc, err := os.ReadFile(guidePath)
	require.NoError(t, err)
	snippets := goBlocks(string(doc))
	require.NotEmpty(t, snippets, "no ```go blocks in %s", guidePath)

	src := source(t)
	regions := markedRegions(t, src)
	require.NotEmpty(t, regions, "no guide:begin regions in the source")

	inGuide := map[string]bool{}
	for _, s := range snippets {
		inGuide[s] = true
		if !appears(src, s) {
			t.Errorf("%s: the snippet starting %q is not in examples/guide's source: change both together",
				guidePath, firstLine(s))
		}
	}
	for _, r := range regions {
		if !inGuide[r.text] {
			t.Errorf("region %q of examples/guide (starting %q) is no snippet of %s: change both together",
				r.name, firstLine(r.text), guidePath)
		}
	}
}

// goBlocks returns the contents of the ```go fences of a Markdown text,
// each without a common leading indentation.
func goBlocks(md string) []string {
	var blocks []string
	var cur []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```go":
			in, cur = true, nil
		case in && trimmed == "```":
			in = false
			blocks = append(blocks, dedent(trimBlank(cur)))
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

// source returns the package's non-test Go files, concatenated.
func source(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var b strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		b.Write(data)
		b.WriteString("\n")
	}
	return b.String()
}

type region struct{ name, text string }

var marker = regexp.MustCompile(`^\s*// guide:(begin|end) (\S+)$`)

// markedRegions returns the dedented text between each "// guide:begin
// NAME" and "// guide:end NAME" line pair of src.
func markedRegions(t *testing.T, src string) []region {
	t.Helper()
	var out []region
	var cur []string
	name := ""
	seen := map[string]bool{}
	for i, line := range strings.Split(src, "\n") {
		m := marker.FindStringSubmatch(line)
		switch {
		case m == nil:
			if name != "" {
				cur = append(cur, line)
			}
		case m[1] == "begin":
			require.Empty(t, name, "line %d: guide:begin %s inside region %s", i+1, m[2], name)
			require.False(t, seen[m[2]], "line %d: region %s twice", i+1, m[2])
			name, cur, seen[m[2]] = m[2], nil, true
		default:
			require.Equal(t, name, m[2], "line %d: guide:end %s does not close the open region", i+1, m[2])
			out = append(out, region{name, dedent(trimBlank(cur))})
			name = ""
		}
	}
	require.Empty(t, name, "region %s is not closed", name)
	return out
}

// appears reports whether snippet occurs in src as whole lines, indented
// by the same number of tabs (zero or more) on every non-empty line.
func appears(src, snippet string) bool {
	lines := strings.Split(snippet, "\n")
	for indent := ""; len(indent) <= 4; indent += "\t" {
		var b strings.Builder
		for _, l := range lines {
			if l != "" {
				b.WriteString(indent)
				b.WriteString(l)
			}
			b.WriteString("\n")
		}
		if strings.Contains("\n"+src, "\n"+b.String()) {
			return true
		}
	}
	return false
}

// dedent removes the longest leading whitespace that every non-empty line
// shares, and the trailing whitespace of each line.
func dedent(lines []string) string {
	prefix := ""
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lead := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = lead, false
			continue
		}
		for !strings.HasPrefix(lead, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(strings.TrimPrefix(l, prefix), " \t")
	}
	return strings.Join(out, "\n")
}

// trimBlank drops the blank lines at both ends.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
