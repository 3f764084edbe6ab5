package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// In event mode a client that finds no response within -spin sleeps on
// its JFCE and is woken by the response's event; one that spins longer
// than any response takes never sleeps, and poll mode never does.
func TestWaitModes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		parks bool
	}{
		// A 1 µs spin is shorter than any round trip through the server,
		// whose worker sleeps on its doorbell once idle.
		{"spin-then-park", []string{"-mode", "event", "-spin", "1us"}, true},
		{"pure-event", []string{"-mode", "event", "-spin", "0"}, true},
		{"long-spin", []string{"-mode", "event", "-spin", "1m"}, false},
		{"poll", []string{"-mode", "poll"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-clients", "1", "-window", "2", "-requests", "600", "-keys", "16", "-duration", "0"}, tc.args...)
			res, out, err := runArgs(t, args...)
			require.NoError(t, err, out)
			checkRun(t, res, out, 600, 16, true)
			if tc.parks {
				assert.NotZero(t, res.parks, "the clients never slept on the JFCE")
				assert.Contains(t, out, fmt.Sprintf("slept on their JFCE %d times", res.parks))
			} else {
				assert.Zero(t, res.parks)
			}
		})
	}
}

// With -batch a client issues a whole window at a time, and only once all
// of the last one is answered, as redis-benchmark -P does: 2000 requests
// in windows of 4 take exactly 500 fills that issue, in both modes.
func TestBatchIssuesWholeWindows(t *testing.T) {
	for _, mode := range []string{"poll", "event"} {
		t.Run(mode, func(t *testing.T) {
			res, out, err := runArgs(t, "-batch", "-mode", mode, "-clients", "1", "-window", "4",
				"-requests", "2000", "-keys", "64", "-duration", "0")
			require.NoError(t, err, out)
			checkRun(t, res, out, 2000, 64, true)
			assert.Equal(t, uint64(500), res.posts)
		})
	}
}
