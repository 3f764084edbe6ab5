package cli_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/cmd/urmactl/internal/cli"
	"github.com/urma-go/sdk/provider/loopback"
)

// rows splits a table into its lines' fields.
func rows(s string) [][]string {
	var out [][]string
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		out = append(out, strings.Fields(l))
	}
	return out
}

func TestSegmentList(t *testing.T) {
	f := newFixture(t)
	eid, uasid, pid := f.ctx.EID().String(), fmt.Sprint(f.ctx.UASID()), fmt.Sprint(os.Getpid())

	var out, warn bytes.Buffer
	// Dir left empty: the listing follows $URMA_LOOPBACK_DIR like the provider.
	require.NoError(t, cli.SegmentList(&out, cli.SegmentListOptions{InspectOptions: cli.InspectOptions{Warn: &warn}}))
	assert.Empty(t, warn.String())
	assert.Equal(t, [][]string{
		{"EID", "UASID", "VA", "LEN", "ACCESS", "TOKEN", "MEMORY", "PID"},
		{eid, uasid, fmt.Sprintf("%#x", f.shared.VA()), "8192", "READ|WRITE",
			fmt.Sprintf("PLAIN_TEXT/%d", f.shared.Descriptor().TokenID), "shared", pid},
		{eid, uasid, fmt.Sprintf("%#x", f.caller.VA()), "4096", "READ",
			fmt.Sprintf("NONE/%d", f.caller.Descriptor().TokenID), "caller", pid},
	}, rows(out.String()))

	out.Reset()
	require.NoError(t, cli.SegmentList(&out, cli.SegmentListOptions{Output: cli.OutputWide,
		InspectOptions: cli.InspectOptions{Dir: f.dir, Warn: &warn}}))
	r := rows(out.String())
	require.Len(t, r, 3)
	assert.Equal(t, []string{"END", "COMMAND"}, r[0][8:])
	assert.Equal(t, fmt.Sprintf("%#x", f.shared.VA()+8192), r[1][8])
	assert.Equal(t, fmt.Sprintf("%#x", f.caller.VA()+4096), r[2][8])
	comm, err := os.ReadFile("/proc/self/comm")
	if err == nil {
		assert.Equal(t, strings.TrimSpace(string(comm)), r[1][9])
	}

	out.Reset()
	require.NoError(t, cli.SegmentList(&out, cli.SegmentListOptions{Output: cli.OutputJSON,
		InspectOptions: cli.InspectOptions{Dir: f.dir, Warn: &warn}}))
	var segs []loopback.SegmentInfo
	require.NoError(t, json.Unmarshal(out.Bytes(), &segs))
	d := f.shared.Descriptor()
	assert.Equal(t, []loopback.SegmentInfo{
		{EID: eid, UASID: f.ctx.UASID(), VA: d.VA, Len: 8192, Access: "READ|WRITE", TokenPolicy: "PLAIN_TEXT",
			TokenID: d.TokenID, Memory: "shared", OwnerPID: os.Getpid()},
		{EID: eid, UASID: f.ctx.UASID(), VA: f.caller.VA(), Len: 4096, Access: "READ", TokenPolicy: "NONE",
			TokenID: f.caller.Descriptor().TokenID, Memory: "caller", OwnerPID: os.Getpid()},
	}, segs)
	var raw []map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &raw))
	assert.ElementsMatch(t, []string{"eid", "uasid", "va", "len", "access", "token_policy", "token_id", "memory", "owner_pid"},
		keys(raw[0]), "stable JSON keys")

	// A closed segment disappears from the listing.
	require.NoError(t, f.caller.Close())
	out.Reset()
	require.NoError(t, cli.SegmentList(&out, cli.SegmentListOptions{InspectOptions: cli.InspectOptions{Dir: f.dir}}))
	assert.Len(t, rows(out.String()), 2)
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestJettyList(t *testing.T) {
	f := newFixture(t)
	eid, uasid, pid := f.ctx.EID().String(), fmt.Sprint(f.ctx.UASID()), fmt.Sprint(os.Getpid())
	jfsAttr, err := f.jfs.Query()
	require.NoError(t, err)
	id := func(n uint32) string { return fmt.Sprint(n) }

	var out, warn bytes.Buffer
	require.NoError(t, cli.JettyList(&out, cli.JettyListOptions{InspectOptions: cli.InspectOptions{Dir: f.dir, Warn: &warn}}))
	assert.Empty(t, warn.String())
	assert.Equal(t, [][]string{
		{"EID", "UASID", "ID", "KIND", "MODE", "STATE", "DEPTH", "OUTSTANDING", "PID"},
		{eid, uasid, id(jfsAttr.ID.ID), "jfs", "RM", "READY", "16", "0", pid},
		{eid, uasid, id(f.jfr.Descriptor().ID.ID), "jfr", "RM", "READY", "8", "2", pid},
		{eid, uasid, id(f.jetty.Descriptor().ID.ID), "jetty", "RC", "READY", "4", "0", pid},
	}, rows(out.String()))

	out.Reset()
	require.NoError(t, cli.JettyList(&out, cli.JettyListOptions{Output: "wide", InspectOptions: cli.InspectOptions{Dir: f.dir}}))
	r := rows(out.String())
	require.Len(t, r, 4)
	assert.Equal(t, []string{"FREE", "COMMAND"}, r[0][9:])
	assert.Equal(t, "6", r[2][9], "a JFR of depth 8 with 2 receives posted has 6 free slots")

	out.Reset()
	require.NoError(t, cli.JettyList(&out, cli.JettyListOptions{Output: "json", InspectOptions: cli.InspectOptions{Dir: f.dir}}))
	var js []loopback.JettyInfo
	require.NoError(t, json.Unmarshal(out.Bytes(), &js))
	require.Len(t, js, 3)
	assert.Equal(t, loopback.JettyInfo{EID: eid, UASID: f.ctx.UASID(), ID: f.jfr.Descriptor().ID.ID, Kind: "jfr",
		Mode: "RM", State: "READY", Depth: 8, Outstanding: 2, OwnerPID: os.Getpid()}, js[1])
}

// An empty runtime directory lists nothing: the header, or [].
func TestListEmpty(t *testing.T) {
	dir := privateDir(t)
	for _, tc := range []struct {
		list func(*bytes.Buffer, string) error
		want string
	}{
		{func(b *bytes.Buffer, o string) error {
			return cli.SegmentList(b, cli.SegmentListOptions{Output: o, InspectOptions: cli.InspectOptions{Dir: dir}})
		}, "EID  UASID  VA  LEN  ACCESS  TOKEN  MEMORY  PID\n"},
		{func(b *bytes.Buffer, o string) error {
			return cli.JettyList(b, cli.JettyListOptions{Output: o, InspectOptions: cli.InspectOptions{Dir: dir}})
		}, "EID  UASID  ID  KIND  MODE  STATE  DEPTH  OUTSTANDING  PID\n"},
	} {
		var b bytes.Buffer
		require.NoError(t, tc.list(&b, ""))
		assert.Equal(t, tc.want, b.String())
		b.Reset()
		require.NoError(t, tc.list(&b, "json"))
		assert.Equal(t, "[]\n", b.String())
	}

	// The default directory may not exist yet: nobody opened a context.
	t.Setenv(loopback.EnvRuntimeDir, filepath.Join(dir, "never-created"))
	var b bytes.Buffer
	require.NoError(t, cli.SegmentList(&b, cli.SegmentListOptions{Output: "json"}))
	assert.Equal(t, "[]\n", b.String())
}

func TestListBadInput(t *testing.T) {
	dir := privateDir(t)
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o700))
	require.NoError(t, os.Chmod(open, 0o755))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(dir, link))
	for _, tc := range []struct {
		opts cli.InspectOptions
		out  string
		want string
	}{
		{cli.InspectOptions{Dir: filepath.Join(dir, "missing")}, "", "loopback runtime directory " + dir + "/missing does not exist"},
		{cli.InspectOptions{Dir: file}, "", "is not a directory"},
		// What urma.Open refuses to use, the listings refuse to read:
		// a directory others can enter, a symlink.
		{cli.InspectOptions{Dir: open}, "", "loopback runtime directory " + open + " has mode 0755; it must be 0700"},
		{cli.InspectOptions{Dir: link}, "", "loopback runtime directory " + link + " is not a directory (a symlink?)"},
		{cli.InspectOptions{Dir: dir, Timeout: -time.Second}, "", "invalid timeout -1s"},
		{cli.InspectOptions{Dir: dir}, "yaml", `invalid output format "yaml"`},
	} {
		var b bytes.Buffer
		err := cli.SegmentList(&b, cli.SegmentListOptions{InspectOptions: tc.opts, Output: tc.out})
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		err = cli.JettyList(&b, cli.JettyListOptions{InspectOptions: tc.opts, Output: tc.out})
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		assert.Empty(t, b.String())
	}

	// The default directory, from $URMA_LOOPBACK_DIR, is checked too, and
	// a relative one is refused as urma.Open refuses it.
	for env, want := range map[string]string{
		open:               "has mode 0755",
		link:               "is not a directory",
		"relative/runtime": `loopback runtime directory "relative/runtime" is relative; it must be absolute`,
	} {
		t.Setenv(loopback.EnvRuntimeDir, env)
		var b bytes.Buffer
		err := cli.SegmentList(&b, cli.SegmentListOptions{})
		require.Error(t, err, env)
		assert.Contains(t, err.Error(), want)
		assert.Empty(t, b.String())
	}
}

// A context that never answers is a warning, not a failure, and does not
// hide the contexts that do answer.
func TestListSilentContext(t *testing.T) {
	f := newFixture(t)
	// The kernel completes connections to a listening socket even if
	// nobody accepts them, so the request is sent and the reply never comes.
	mute := filepath.Join(f.dir, "mute.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: mute, Net: "unix"})
	require.NoError(t, err)
	defer ln.Close()

	// The timeout bounds the wait for the mute socket; it also bounds the
	// live context's answer, so it is long enough for a loaded host.
	var out, warn bytes.Buffer
	start := time.Now()
	require.NoError(t, cli.SegmentList(&out, cli.SegmentListOptions{
		InspectOptions: cli.InspectOptions{Dir: f.dir, Timeout: time.Second, Warn: &warn}}))
	assert.Less(t, time.Since(start), 10*time.Second, "the listing waited past its timeout")
	assert.Len(t, rows(out.String()), 3, "the live context's two segments are still listed")
	require.Equal(t, 1, strings.Count(warn.String(), "\n"), warn.String())
	assert.True(t, strings.HasPrefix(warn.String(), "urmactl: warning: a loopback context did not answer: "), warn.String())
	assert.Contains(t, warn.String(), mute, "the warning names the socket")
}

// A socket left by a dead process is not a context: it is neither listed
// nor warned about.
func TestListStaleSocket(t *testing.T) {
	dir := privateDir(t)
	stale := filepath.Join(dir, "dead.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	require.NoError(t, err)
	ln.SetUnlinkOnClose(false)
	require.NoError(t, ln.Close())

	var out, warn bytes.Buffer
	require.NoError(t, cli.JettyList(&out, cli.JettyListOptions{InspectOptions: cli.InspectOptions{Dir: dir, Warn: &warn}}))
	assert.Len(t, rows(out.String()), 1)
	assert.Empty(t, warn.String())
}

// fakeContext listens on name in dir as a loopback context's control
// socket does and answers every request with status and payload, as any
// process of this user could: the header is type u8, three pad bytes,
// status u32 and length u32, little-endian.
func fakeContext(t *testing.T, dir, name string, status uint32, payload []byte) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, name), Net: "unix"})
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return
			}
			var hdr [12]byte
			if _, err := io.ReadFull(c, hdr[:]); err == nil {
				_, _ = io.CopyN(io.Discard, c, int64(binary.LittleEndian.Uint32(hdr[8:])))
				reply := make([]byte, 12, 12+len(payload))
				reply[0] = hdr[0]
				binary.LittleEndian.PutUint32(reply[4:], status)
				binary.LittleEndian.PutUint32(reply[8:], uint32(len(payload)))
				_, _ = c.Write(append(reply, payload...))
			}
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
}

// terminalSafe fails the test if out holds a character a terminal would
// act on, other than the newlines that end the lines.
func terminalSafe(t *testing.T, out string) {
	t.Helper()
	for i, r := range out {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) || r == '\u202e' {
			t.Fatalf("output holds %U at byte %d:\n%q", r, i, out)
		}
	}
}

// What a context's process puts in its LIST reply is printed with the
// characters a terminal acts on escaped: no escape sequence reaches the
// terminal, and a newline or tab cannot forge a row or a column. JSON
// carries the same strings, escaped, and decodes to them.
func TestListEscapesWhatAPeerSends(t *testing.T) {
	dir := privateDir(t)
	seg := loopback.SegmentInfo{EID: "\x1b[2J::1", UASID: 7, VA: 0x1000, Len: 64, Access: "READ\nFAKE ROW",
		TokenPolicy: "\u009b31m", TokenID: 3, Memory: "shared\tX", OwnerPID: 1}
	jet := loopback.JettyInfo{EID: "::1\r", UASID: 7, ID: 9, Kind: "jfr\x1b]0;title\a", Mode: "RC\u202e",
		State: "READY\x7f", Depth: 4, OwnerPID: 1}
	reply, err := json.Marshal(loopback.ContextInfo{PID: 1, EID: "::1", UASID: 7,
		Segments: []loopback.SegmentInfo{seg}, Jetties: []loopback.JettyInfo{jet}})
	require.NoError(t, err)
	fakeContext(t, dir, "a.sock", 0, reply)
	// A context that answers with an error: its text is the peer's too.
	fakeContext(t, dir, "b.sock", 0x1000, []byte("\x1b[31mboom\nurmactl: forged line"))

	var out, warn bytes.Buffer
	opts := cli.InspectOptions{Dir: dir, Warn: &warn, Timeout: time.Second}
	require.NoError(t, cli.SegmentList(&out, cli.SegmentListOptions{InspectOptions: opts, Output: cli.OutputWide}))
	terminalSafe(t, out.String())
	r := rows(out.String())
	require.Len(t, r, 2, "one header and one row:\n%s", out.String())
	assert.Equal(t, []string{`\x1b[2J::1`, "7", "0x1000", "64", `READ\nFAKE`, "ROW", `\u009b31m/3`, `shared\tX`, "1"}, r[1][:9])

	terminalSafe(t, warn.String())
	assert.Equal(t, 1, strings.Count(warn.String(), "\n"), warn.String())
	assert.Contains(t, warn.String(), `b.sock: peer: \x1b[31mboom\nurmactl: forged line`)

	out.Reset()
	require.NoError(t, cli.JettyList(&out, cli.JettyListOptions{InspectOptions: opts}))
	terminalSafe(t, out.String())
	r = rows(out.String())
	require.Len(t, r, 2, out.String())
	assert.Equal(t, []string{`::1\r`, "7", "9", `jfr\x1b]0;title\a`, `RC\u202e`, `READY\x7f`, "4", "0", "1"}, r[1])

	out.Reset()
	require.NoError(t, cli.SegmentList(&out, cli.SegmentListOptions{InspectOptions: opts, Output: cli.OutputJSON}))
	terminalSafe(t, out.String())
	var segs []loopback.SegmentInfo
	require.NoError(t, json.Unmarshal(out.Bytes(), &segs))
	assert.Equal(t, []loopback.SegmentInfo{seg}, segs)
	out.Reset()
	require.NoError(t, cli.JettyList(&out, cli.JettyListOptions{InspectOptions: opts, Output: cli.OutputJSON}))
	terminalSafe(t, out.String())
	var js []loopback.JettyInfo
	require.NoError(t, json.Unmarshal(out.Bytes(), &js))
	assert.Equal(t, []loopback.JettyInfo{jet}, js)
}
