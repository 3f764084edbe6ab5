package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/cmd/urmactl/internal/cli"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// TestStats runs known work on the fixture's live context (two SENDs to
// its JFR, and a WRITE out of bounds that fails) and checks what stats
// prints of it, in each format.
func TestStats(t *testing.T) {
	f := newFixture(t)
	eid, uasid, pid := f.ctx.EID().String(), fmt.Sprint(f.ctx.UASID()), fmt.Sprint(os.Getpid())
	rem, err := jetty.ImportJFR(t.Context(), f.ctx, f.jfr.Descriptor(), 0)
	require.NoError(t, err)
	tg, err := segment.Import(t.Context(), f.ctx, f.shared.Descriptor(), 0x5eed)
	require.NoError(t, err)
	require.NoError(t, f.jfs.Send(rem, f.shared.SGE(1024, 10), jetty.Signaled, 1))
	require.NoError(t, f.jfs.Send(rem, f.shared.SGE(1024, 20), jetty.Signaled, 2))
	require.NoError(t, f.jfs.Write(rem, tg.SGE(8192-8, 16), f.shared.SGE(0, 16), jetty.Signaled, 3))
	crs := make([]jetty.CR, 8)
	n := 0
	for n < 5 {
		k, err := f.jfc.Poll(crs[n:])
		require.NoError(t, err)
		n += k
	}
	js, err := f.jfc.Stats()
	require.NoError(t, err)
	require.Equal(t, uint64(5), js.Completions)
	require.Equal(t, map[urma.CRStatus]uint64{urma.CRRemAccessAbortErr: 1}, js.Errors)

	var out, warn bytes.Buffer
	require.NoError(t, cli.Stats(&out, cli.StatsOptions{InspectOptions: cli.InspectOptions{Dir: f.dir, Warn: &warn}}))
	assert.Empty(t, warn.String())
	r := rows(out.String())
	require.Equal(t, []string{"EID", "UASID", "OBJECT", "ID", "POSTED", "BYTES", "RECV", "POLLED", "FAILED",
		"POST_ERR", "RNR", "PID"}, r[0])
	byKind := map[string][]string{}
	for _, row := range r[1:] {
		require.Len(t, row, 12, "%q", row)
		assert.Equal(t, []string{eid, uasid}, row[:2])
		assert.Equal(t, pid, row[11])
		byKind[row[2]] = row[4:11]
	}
	//                         POSTED BYTES  RECV POLLED FAILED POST_ERR RNR
	assert.Equal(t, []string{"3", "46", "2", "5", "1", "0", "0"}, byKind["context"])
	assert.Equal(t, []string{"3", "46", "0", "0", "0", "0", "0"}, byKind["jfs"])
	assert.Equal(t, []string{"0", "0", "2", "0", "0", "0", "0"}, byKind["jfr"])
	assert.Equal(t, []string{"0", "0", "0", "0", "0", "0", "0"}, byKind["jetty"])
	assert.Equal(t, []string{"0", "0", "0", "5", "1", "0", "0"}, byKind["jfc"])

	out.Reset()
	require.NoError(t, cli.Stats(&out, cli.StatsOptions{Output: cli.OutputWide,
		InspectOptions: cli.InspectOptions{Dir: f.dir, Warn: &warn}}))
	r = rows(out.String())
	assert.Equal(t, []string{"QUEUES", "ERRORS", "COMMAND"}, r[0][12:])
	for _, row := range r[1:] {
		switch row[2] {
		case "context":
			assert.Equal(t, []string{"jfs=1,jfr=1,jetty=1,jfc=1", "REM_ACCESS_ABORT_ERR=1"}, row[12:14])
		case "jfc":
			assert.Equal(t, []string{"-", "REM_ACCESS_ABORT_ERR=1"}, row[12:14])
		default:
			assert.Equal(t, []string{"-", "-"}, row[12:14], "%q", row)
		}
	}

	out.Reset()
	require.NoError(t, cli.Stats(&out, cli.StatsOptions{Output: cli.OutputJSON,
		InspectOptions: cli.InspectOptions{Dir: f.dir, Warn: &warn}}))
	var ctxs []struct {
		PID     int                        `json:"pid"`
		EID     string                     `json:"eid"`
		UASID   uint32                     `json:"uasid"`
		Stats   *loopback.ContextStatsInfo `json:"stats"`
		Jetties []loopback.JettyInfo       `json:"jetties"`
		JFCs    []loopback.JFCInfo         `json:"jfcs"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &ctxs))
	require.Len(t, ctxs, 1)
	c := ctxs[0]
	assert.Equal(t, os.Getpid(), c.PID)
	require.NotNil(t, c.Stats)
	assert.Equal(t, loopback.ContextStatsInfo{JFS: 1, JFR: 1, Jetty: 1, JFC: 1, Total: loopback.QueueStatsInfo{
		Posted: 3, Bytes: 46, RecvPosted: 2, Completions: 5, Errors: map[string]uint64{"REM_ACCESS_ABORT_ERR": 1}}}, *c.Stats)
	require.Len(t, c.JFCs, 1)
	assert.Equal(t, 64, c.JFCs[0].Depth)
	require.Len(t, c.Jetties, 3)
	for _, j := range c.Jetties {
		require.NotNil(t, j.Stats, j.Kind)
	}
	var raw []map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &raw))
	assert.ElementsMatch(t, []string{"pid", "eid", "uasid", "stats", "jetties", "jfcs"}, keys(raw[0]), "stable JSON keys")

	// jetty ls, which asks without counters, gets none.
	out.Reset()
	require.NoError(t, cli.JettyList(&out, cli.JettyListOptions{Output: cli.OutputJSON,
		InspectOptions: cli.InspectOptions{Dir: f.dir, Warn: &warn}}))
	var ls []map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &ls))
	require.NotEmpty(t, ls)
	assert.NotContains(t, keys(ls[0]), "stats")
}

func TestStatsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"stats", "extra"}, {"stats", "-o", "yaml"}, {"stats", "--port", "-1", "-d", "loopback0"},
		{"stats", "--port", "1"},
	} {
		_, _, err := execute(t, nil, args...)
		var ue *cli.UsageError
		require.ErrorAs(t, err, &ue, args)
		assert.Equal(t, 2, cli.ExitCode(err), args)
	}
	_, _, err := execute(t, nil, "stats", "-d", "loopback0")
	require.ErrorIs(t, err, urma.ErrNotSupported, "loopback keeps no port counters")
	assert.Equal(t, 1, cli.ExitCode(err))
	_, _, err = execute(t, nil, "stats", "-d", "nosuchdevice0")
	require.ErrorIs(t, err, urma.ErrNotFound)
	assert.Equal(t, 1, cli.ExitCode(err))
}
