package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/examples/internal/extest"
)

// summary matches what a load generator prints at the end of a run.
var summary = regexp.MustCompile(`(?m)^kv: (\d+) requests in [\d.]+ s: [\d.]+ Mops \(\d+ ops/s\), latency p50 [\d.]+ µs, p99 [\d.]+ µs, p99\.9 [\d.]+ µs \(mean [\d.]+, max [\d.]+\)
kv: GET (\d+) \(found (\d+), missing (\d+), unknown (\d+)\), PUT (\d+): every response correct
kv: the clients sent (\d+) requests, the server served (\d+)$`)

func runArgs(t *testing.T, args ...string) (result, string, error) {
	t.Helper()
	cfg, err := parseArgs(args, io.Discard)
	require.NoError(t, err)
	var b bytes.Buffer
	res, err := run(extest.Context(t, 2*time.Minute), &b, cfg)
	return res, b.String(), err
}

// checkRun checks a run's result and summary: every request answered and
// counted once, and (with the preload) every GET found what the model
// says.
func checkRun(t *testing.T, res result, out string, requests, keys int, preload bool) {
	t.Helper()
	m := summary.FindStringSubmatch(out)
	require.NotNil(t, m, "output:\n%s", out)
	want := []string{fmt.Sprint(requests), fmt.Sprint(res.counts.gets), fmt.Sprint(res.counts.found),
		fmt.Sprint(res.counts.missing), fmt.Sprint(res.counts.unchecked), fmt.Sprint(res.counts.puts),
		fmt.Sprint(res.sent), fmt.Sprint(res.served)}
	assert.Equal(t, want, m[1:])
	assert.Equal(t, uint64(requests), res.requests)
	assert.Equal(t, uint64(requests), res.counts.gets+res.counts.puts)
	assert.Equal(t, uint64(requests), res.hist.n)
	assert.Equal(t, res.sent, res.served)
	if preload {
		assert.Equal(t, uint64(keys), res.preloaded)
		assert.Equal(t, uint64(requests+keys), res.sent)
		assert.Zero(t, res.counts.unchecked, "after the preload the model knows every key")
		assert.Zero(t, res.counts.missing)
		assert.Equal(t, res.counts.gets, res.counts.found)
	}
}

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		requests int
		keys     int
		says     string // in the output, if set
	}{
		{"poll", []string{"-clients", "2", "-window", "4", "-requests", "2000", "-keys", "64"}, 2000, 64, ""},
		{"event", []string{"-clients", "2", "-window", "4", "-requests", "2000", "-keys", "64", "-mode", "event"}, 2000, 64, ""},
		{"1KiB-values-half-puts", []string{"-workers", "3", "-clients", "3", "-window", "5", "-value", "1024",
			"-get-ratio", "0.5", "-requests", "1500", "-keys", "100", "-signal", "3"}, 1500, 100, ""},
		{"tiny", []string{"-workers", "1", "-clients", "1", "-window", "1", "-value", "1", "-requests", "300", "-keys", "2", "-signal", "1"}, 300, 2, ""},
		// Several clients on one goroutine and one JFC, and groups of
		// unequal size; each client still checks its own responses.
		{"3-clients-1-thread", []string{"-workers", "2", "-clients", "3", "-threads", "1", "-window", "4",
			"-get-ratio", "0.5", "-requests", "2000", "-keys", "64"}, 2000, 64, "3 clients on 1 goroutines"},
		{"5-clients-2-threads-event", []string{"-clients", "5", "-threads", "2", "-window", "3",
			"-requests", "2000", "-keys", "64", "-mode", "event"}, 2000, 64, "5 clients on 2 goroutines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, out, err := runArgs(t, append(tc.args, "-duration", "0")...)
			require.NoError(t, err, out)
			checkRun(t, res, out, tc.requests, tc.keys, true)
			assert.Contains(t, out, "kv: session 1: served")
			assert.Contains(t, out, tc.says)
		})
	}
}

// Without the preload, GETs of keys not yet PUT in this run find nothing
// (the server is new) and the model accepts whatever they find.
func TestRunNoPreload(t *testing.T) {
	res, out, err := runArgs(t, "-clients", "2", "-window", "4", "-requests", "1000", "-keys", "500",
		"-preload=false", "-get-ratio", "0.5", "-duration", "0")
	require.NoError(t, err, out)
	checkRun(t, res, out, 1000, 500, false)
	assert.NotContains(t, out, "preloaded")
	assert.Positive(t, res.counts.missing)
	assert.Equal(t, res.sent, uint64(1000))
}

// -duration bounds a run on its own; no assertion about how many requests
// fit in it.
func TestRunDuration(t *testing.T) {
	res, out, err := runArgs(t, "-clients", "1", "-window", "2", "-keys", "16", "-duration", "50ms")
	require.NoError(t, err, out)
	// The count is the run's own, so it must be checked apart from the
	// consistency checkRun makes: a timed run serves requests for at
	// least its duration.
	require.Positive(t, res.requests, "a 50 ms run measured no request:\n%s", out)
	require.GreaterOrEqual(t, res.elapsed, 50*time.Millisecond, "the measured phase ended early")
	checkRun(t, res, out, int(res.requests), 16, true)
}

func TestRunRefused(t *testing.T) {
	_, out, err := runArgs(t, "-workers", "64", "-clients", "16", "-window", "1024", "-value", "1024",
		"-keys", "20000", "-requests", "1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "server refused: a request region of 1048 MiB")
	assert.NotContains(t, out, "load generator on")
}

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 32, cfg.value)
	assert.Equal(t, 0.95, cfg.getRatio)
	assert.True(t, cfg.preload)
	assert.Equal(t, defaultSpin, cfg.spin)
	assert.False(t, cfg.batch)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-mode", "busy"}, `-mode "busy"`},
		{[]string{"-server", "-client"}, "exclude each other"},
		{[]string{"-workers", "0"}, "-workers 0"},
		{[]string{"-workers", "65"}, "-workers 65"},
		{[]string{"-signal", "0"}, "-signal 0"},
		{[]string{"-spin", "-1us"}, "-spin -1µs"},
		{[]string{"-clients", "0"}, "0 clients"},
		{[]string{"-threads", "-1"}, "-threads -1"},
		{[]string{"-window", "2000"}, "window 2000"},
		{[]string{"-value", "0"}, "value size 0"},
		{[]string{"-value", "5000"}, "value size 5000"},
		{[]string{"-keys", "9", "-clients", "2", "-window", "4"}, "-keys 9"},
		{[]string{"-get-ratio", "1.5"}, "-get-ratio 1.5"},
		{[]string{"-get-ratio", "NaN"}, "-get-ratio NaN"},
		{[]string{"-requests", "0", "-duration", "0"}, "want one of them positive"},
		{[]string{"-requests", "-1"}, "neither negative"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-nope"}, "not defined"},
	} {
		_, err := parseArgs(tc.args, io.Discard)
		if assert.Error(t, err, "%q", tc.args) {
			assert.Contains(t, err.Error(), tc.want, "%q", tc.args)
		}
	}
	// The server takes no client flags into account.
	_, err = parseArgs([]string{"-server", "-window", "0"}, io.Discard)
	assert.NoError(t, err)
}

func TestRunErrors(t *testing.T) {
	_, _, err := runArgs(t, "-dev", "nope", "-requests", "10", "-keys", "64")
	assert.ErrorContains(t, err, `"nope"`)
	_, _, err = runArgs(t, "-provider", "nope", "-requests", "10", "-keys", "64")
	assert.ErrorContains(t, err, "forgotten import?")
}
