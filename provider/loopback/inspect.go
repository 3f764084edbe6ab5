package loopback

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/wire"
)

// ContextInfo describes a live loopback context of this host: what
// urmactl segment ls and urmactl jetty ls print.
type ContextInfo struct {
	PID      int           `json:"pid"`
	EID      string        `json:"eid"`
	UASID    uint32        `json:"uasid"`
	Segments []SegmentInfo `json:"segments"`
	Jetties  []JettyInfo   `json:"jetties"`
	// Error is set when the context's process did not answer.
	Error string `json:"error,omitempty"`

	// Stats and JFCs are set by InspectStats: the context's counters,
	// and its JFCs with theirs.
	Stats *ContextStatsInfo `json:"stats,omitempty"`
	JFCs  []JFCInfo         `json:"jfcs,omitempty"`
}

// SegmentInfo describes a registered segment.
type SegmentInfo struct {
	EID         string `json:"eid"`
	UASID       uint32 `json:"uasid"`
	VA          uint64 `json:"va"`
	Len         uint64 `json:"len"`
	Access      string `json:"access"`
	TokenPolicy string `json:"token_policy"`
	TokenID     uint32 `json:"token_id"`
	// Memory is "shared" for allocated (memfd) memory, "caller" for
	// registered caller memory.
	Memory   string `json:"memory"`
	OwnerPID int    `json:"owner_pid"`
}

// JettyInfo describes a JFS, JFR or Jetty.
type JettyInfo struct {
	EID         string `json:"eid"`
	UASID       uint32 `json:"uasid"`
	ID          uint32 `json:"id"`
	Kind        string `json:"kind"`
	Mode        string `json:"mode"`
	State       string `json:"state"`
	Depth       int    `json:"depth"`
	Outstanding int    `json:"outstanding"`
	OwnerPID    int    `json:"owner_pid"`

	// Stats is set by InspectStats: the queue's counters.
	Stats *QueueStatsInfo `json:"stats,omitempty"`
}

// info describes the context for a LIST request; with stats, with its
// counters (statsInfo).
func (c *lbContext) info(stats bool) ContextInfo {
	pid := os.Getpid()
	eid := c.eid.String()
	ci := ContextInfo{PID: pid, EID: eid, UASID: c.uasid, Segments: []SegmentInfo{}, Jetties: []JettyInfo{}}
	c.mu.Lock()
	kids := slices.Collect(c.children.All())
	c.mu.Unlock()
	for _, k := range kids {
		var q provider.QueueAttr
		var err error
		kind := ""
		switch o := k.(type) {
		case *segment:
			if o.closed.Load() {
				continue
			}
			mem := "shared"
			if o.m == nil {
				mem = "caller"
			}
			d := o.desc
			ci.Segments = append(ci.Segments, SegmentInfo{EID: eid, UASID: c.uasid, VA: d.VA, Len: d.Len,
				Access: d.Access.String(), TokenPolicy: d.TokenPolicy.String(), TokenID: d.TokenID, Memory: mem, OwnerPID: pid})
			continue
		case *jfsObj:
			kind = "jfs"
			q, err = o.Query()
		case *jfrObj:
			kind = "jfr"
			q, err = o.Query()
		case *jettyObj:
			kind = "jetty"
			q, err = o.Query()
		default:
			continue
		}
		if err != nil {
			continue
		}
		ci.Jetties = append(ci.Jetties, JettyInfo{EID: eid, UASID: c.uasid, ID: q.ID.ID, Kind: kind, Mode: q.Mode.String(),
			State: q.State.String(), Depth: q.Depth, Outstanding: q.Outstanding, OwnerPID: pid})
		if stats {
			ci.Jetties[len(ci.Jetties)-1].Stats = queueStatsInfo(k)
		}
	}
	if stats {
		c.statsInfo(&ci, kids)
	}
	return ci
}

// Inspect lists the loopback contexts live on this host whose sockets are
// in dir ("" means RuntimeDir()), asking each over its control socket. A
// context that does not answer within timeout is listed with Error set.
// A missing dir holds no contexts; an existing one must pass the checks
// that Open applies (absolute, a real directory, this user's, mode 0700),
// since whoever can write into it could plant a socket whose answers
// would be listed as this user's contexts.
func Inspect(dir string, timeout time.Duration) ([]ContextInfo, error) {
	return inspect(dir, timeout, nil)
}

// InspectStats is Inspect with the counters of each context, of its
// queues and of its JFCs (ContextInfo.Stats, JettyInfo.Stats,
// ContextInfo.JFCs): what urmactl stats prints.
func InspectStats(dir string, timeout time.Duration) ([]ContextInfo, error) {
	return inspect(dir, timeout, []byte{wire.ListStats})
}

func inspect(dir string, timeout time.Duration, req []byte) ([]ContextInfo, error) {
	if dir == "" {
		dir = RuntimeDir()
	}
	if err := checkAbs(dir); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, provider.Errorf(provider.ErrPermission, "read loopback runtime directory: %v", err)
	}
	var out []ContextInfo
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), sockSuffix) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		ci, err := inspectOne(path, timeout, req)
		if err != nil {
			if removeIfStale(path) {
				continue
			}
			// Name the context by its socket file, since it could not say.
			ci.Error = e.Name() + ": " + err.Error()
		}
		out = append(out, ci)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].EID != out[j].EID {
			return out[i].EID < out[j].EID
		}
		return out[i].UASID < out[j].UASID
	})
	return out, nil
}

func inspectOne(path string, timeout time.Duration, req []byte) (ContextInfo, error) {
	var ci ContextInfo
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return ci, err
	}
	defer conn.Close()
	// A listing from another user's listener would be that user's word.
	if _, err := checkPeerUID(conn, ownUID(), "the context at "+path); err != nil {
		return ci, err
	}
	conn.SetDeadline(time.Now().Add(timeout))
	if err := wire.Write(conn, wire.Message{Type: wire.List, Payload: req}); err != nil {
		return ci, err
	}
	m, err := wire.Read(conn, wire.ReplyLimit, 0)
	if err != nil {
		return ci, err
	}
	m.CloseFDs()
	if err := m.Err(); err != nil {
		return ci, err
	}
	if err := json.Unmarshal(m.Payload, &ci); err != nil {
		return ci, provider.Errorf(provider.ErrFail, "bad listing from %s: %v", path, err)
	}
	return ci, nil
}
