package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// In event mode with -spin 0 an idle worker sleeps on its bell's JFCE at
// once, and the clients' rings wake it: every request is answered and
// checked, the workers slept, and they took every ring the clients rang,
// once each.
func TestWorkersSleepOnTheirBell(t *testing.T) {
	for _, workers := range []string{"1", "3"} {
		t.Run(workers+"-workers", func(t *testing.T) {
			res, out, err := runArgs(t, "-mode", "event", "-spin", "0", "-workers", workers, "-clients", "2",
				"-window", "4", "-requests", "3000", "-keys", "64", "-duration", "0")
			require.NoError(t, err, out)
			checkRun(t, res, out, 3000, 64, true)
			assert.Positive(t, res.server.sleeps, "the workers never slept on their JFCE")
			assert.Positive(t, res.rings)
			assert.Equal(t, res.rings, res.server.rings, "rings rung and taken")
			// A post rings each worker it writes to once, however
			// many requests it holds.
			assert.LessOrEqual(t, res.rings, res.sent)
			assert.Contains(t, out, fmt.Sprintf("the workers took %d doorbells and slept on their JFCE %d times (-spin 0s)",
				res.server.rings, res.server.sleeps))
			assert.Contains(t, out, fmt.Sprintf("the clients rang the workers' doorbells %d times", res.rings))
		})
	}
}

// A request that lands while its worker goes to sleep is answered: the
// worker arms its bell, scans once more and only then sleeps. One client
// with one request in flight leaves the workers idle between each
// response and the next request, for about a round trip, which is when a
// worker with a short spin arms and sleeps; a request slept through
// would never be answered (nothing else rings), and the client would
// fail with "no completion".
func TestRequestLandingAtSleepIsAnswered(t *testing.T) {
	for _, spin := range []string{"0", "1us", "3us", "10us"} {
		t.Run(spin, func(t *testing.T) {
			res, out, err := runArgs(t, "-mode", "event", "-spin", spin, "-workers", "2", "-clients", "1",
				"-window", "1", "-requests", "4000", "-keys", "16", "-duration", "0")
			require.NoError(t, err, out)
			checkRun(t, res, out, 4000, 16, true)
			assert.Positive(t, res.server.sleeps, "the workers never slept, so the race was not run")
			// Window 1: each request is its own post and rings.
			assert.Equal(t, res.sent, res.rings)
			assert.Equal(t, res.rings, res.server.rings)
		})
	}
}

// Poll mode has no bells: the server offers none, the clients ring none,
// and the workers never sleep, whatever mode the clients wait in.
func TestPollModeNeverRings(t *testing.T) {
	res, out, err := runArgs(t, "-mode", "poll", "-workers", "2", "-clients", "2", "-window", "4",
		"-requests", "2000", "-keys", "64", "-duration", "0")
	require.NoError(t, err, out)
	checkRun(t, res, out, 2000, 64, true)
	assert.Zero(t, res.rings)
	assert.Equal(t, workerCounts{gets: res.server.gets, puts: res.server.puts}, res.server)
	assert.NotContains(t, out, "doorbells")
}
