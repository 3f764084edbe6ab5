package loopback

import (
	"github.com/urma-go/sdk/provider"
)

// ContextStatsInfo are a context's counters, as urmactl stats prints them
// (see urma.ContextStats).
type ContextStatsInfo struct {
	JFS   int            `json:"jfs"`
	JFR   int            `json:"jfr"`
	Jetty int            `json:"jetty"`
	JFC   int            `json:"jfc"`
	Total QueueStatsInfo `json:"total"`
}

// QueueStatsInfo are a queue's or a JFC's counters (see urma.QueueStats).
// Errors is keyed by the status's URMA name without its URMA_CR_ prefix,
// e.g. "REM_ACCESS_ABORT_ERR"; statuses never seen are absent.
type QueueStatsInfo struct {
	Posted      uint64            `json:"posted"`
	Bytes       uint64            `json:"bytes"`
	RecvPosted  uint64            `json:"recv_posted"`
	PostErrors  uint64            `json:"post_errors"`
	RNRRetries  uint64            `json:"rnr_retries"`
	Completions uint64            `json:"completions"`
	Errors      map[string]uint64 `json:"errors,omitempty"`
	Flushed     uint64            `json:"flushed"`
}

// Failed is the sum of Errors: the records with an error status.
func (s *QueueStatsInfo) Failed() uint64 {
	var n uint64
	for _, v := range s.Errors {
		n += v
	}
	return n
}

// JFCInfo describes a JFC and its counters.
type JFCInfo struct {
	EID      string          `json:"eid"`
	UASID    uint32          `json:"uasid"`
	ID       uint32          `json:"id"`
	Depth    int             `json:"depth"`
	OwnerPID int             `json:"owner_pid"`
	Stats    *QueueStatsInfo `json:"stats,omitempty"`
}

// statsInfo adds the counters of the context and of its JFCs to ci;
// kids are the context's objects.
func (c *lbContext) statsInfo(ci *ContextInfo, kids []child) {
	if cs, err := c.Stats(); err == nil {
		ci.Stats = &ContextStatsInfo{JFS: cs.JFS, JFR: cs.JFR, Jetty: cs.Jetty, JFC: cs.JFC, Total: statsInfoOf(&cs.Total)}
	}
	ci.JFCs = []JFCInfo{}
	for _, k := range kids {
		j, ok := k.(*jfc)
		if !ok || j.closed.Load() {
			continue
		}
		ci.JFCs = append(ci.JFCs, JFCInfo{EID: ci.EID, UASID: c.uasid, ID: j.id, Depth: j.depth, OwnerPID: ci.PID,
			Stats: queueStatsInfo(j)})
	}
}

// queueStatsInfo is the counters of o, nil when it keeps none or closed.
func queueStatsInfo(o any) *QueueStatsInfo {
	sq, ok := o.(provider.StatsQueue)
	if !ok {
		return nil
	}
	s, err := sq.Stats()
	if err != nil {
		return nil
	}
	i := statsInfoOf(&s)
	return &i
}

func statsInfoOf(s *provider.QueueStats) QueueStatsInfo {
	i := QueueStatsInfo{Posted: s.Posted, Bytes: s.Bytes, RecvPosted: s.RecvPosted, PostErrors: s.PostErrors,
		RNRRetries: s.RNRRetries, Completions: s.Completions, Flushed: s.Flushed}
	for slot, v := range s.Errors {
		if v == 0 || slot == 0 {
			continue
		}
		if i.Errors == nil {
			i.Errors = map[string]uint64{}
		}
		st := provider.CRStatus(slot)
		if slot == provider.StatusSlots-1 {
			st = provider.CRSignatureErr
		}
		i.Errors[st.String()] += v
	}
	return i
}
