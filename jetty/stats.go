package jetty

import (
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Stats returns the JFS's counters: requests posted, their bytes, refused
// posts and RNR retries (see urma.QueueStats). It fails with
// urma.ErrNotSupported when the provider keeps none and urma.ErrClosed
// once the JFS is closed.
func (j *JFS) Stats() (urma.QueueStats, error) { return queueStats("jfs stats", j.sender.p) }

// Stats returns the JFR's counters: receives posted and refused posts
// (see urma.QueueStats). Errors as for JFS.Stats.
func (j *JFR) Stats() (urma.QueueStats, error) { return queueStats("jfr stats", j.p) }

// Stats returns the Jetty's counters: those of a JFS, and the receives
// posted to its own receive queue (see urma.QueueStats). Errors as for
// JFS.Stats.
func (j *Jetty) Stats() (urma.QueueStats, error) { return queueStats("jetty stats", j.p) }

// Stats returns the JFC's counters: the records polled, and those of each
// error status (see urma.QueueStats). The records of every queue that
// completes into the JFC count here, send and receive side alike. Errors
// as for JFS.Stats.
func (j *JFC) Stats() (urma.QueueStats, error) { return queueStats("jfc stats", j.p) }

func queueStats(op string, raw any) (urma.QueueStats, error) {
	sq, ok := raw.(provider.StatsQueue)
	if !ok {
		return urma.QueueStats{}, opErr(op, provider.Errorf(urma.ErrNotSupported, "provider keeps no queue counters"))
	}
	ps, err := sq.Stats()
	if err != nil {
		return urma.QueueStats{}, opErr(op, err)
	}
	return urma.QueueStatsOf(ps), nil
}
