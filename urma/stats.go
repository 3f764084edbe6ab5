package urma

import "github.com/urma-go/sdk/provider"

// QueueStats are the counters of a queue, as urma_admin show_stats and
// urma_get_perf_info report them. They are always on and count from the
// queue's creation; a field the queue's kind does not keep is zero:
//
//   - JFS: Posted, Bytes, PostErrors, RNRRetries, Flushed.
//   - JFR: RecvPosted, PostErrors.
//   - Jetty: those of a JFS, and RecvPosted of its own receive queue (a
//     shared JFR counts its receives itself).
//   - JFC: Completions and Errors.
//
// Reading them takes the queue's lock for a moment, as Query does.
type QueueStats struct {
	// Posted counts the send requests the queue accepted (a Post that
	// returns n accepted n of them).
	Posted uint64
	// Bytes is the data the accepted send requests carry (jetty.WR.DataLen:
	// inline bytes or the sum of the local SGEs).
	Bytes uint64
	// RecvPosted counts the receive requests the queue accepted.
	RecvPosted uint64
	// PostErrors counts the posts that returned an error, ErrAgain of a
	// full queue included.
	PostErrors uint64
	// RNRRetries counts the retries of requests that found no receive
	// posted at their target (the RNR timer's). Where the device retries
	// in hardware (provider ib) it is zero: the port's hw_counters count
	// them (see Device.PortCounters).
	RNRRetries uint64
	// Completions counts the completion records polled from the JFC,
	// whatever their status.
	Completions uint64
	// Errors counts the records polled with each error status; statuses
	// never seen are absent.
	Errors map[CRStatus]uint64
	// Flushed counts the WR_FLUSH_ERR records a send queue's Flush handed
	// out (they come from Flush, not from a poll of the JFC).
	Flushed uint64
}

// Success is the records polled with CRSuccess.
func (s *QueueStats) Success() uint64 { return s.Completions - s.Failed() }

// Failed is the records polled with an error status.
func (s *QueueStats) Failed() uint64 {
	var n uint64
	for _, v := range s.Errors {
		n += v
	}
	return n
}

// ContextStats are the counters of a context.
type ContextStats struct {
	// JFS, JFR, Jetty and JFC count the context's live queues of each
	// kind.
	JFS, JFR, Jetty, JFC int
	// Total sums the counters of every queue and JFC the context has had,
	// closed ones included. A queue that closes during the call may be
	// counted twice in it.
	Total QueueStats
}

// Stats returns the counters of the context. It fails with ErrNotSupported
// when the provider keeps none, and ErrClosed once the context is closed.
func (c *Context) Stats() (ContextStats, error) {
	sc, ok := c.p.(provider.StatsContext)
	if !ok {
		return ContextStats{}, &OpError{Op: "context stats", Err: provider.Errorf(ErrNotSupported, "provider keeps no counters")}
	}
	ps, err := sc.Stats()
	if err != nil {
		return ContextStats{}, &OpError{Op: "context stats", Err: err}
	}
	return ContextStats{JFS: ps.JFS, JFR: ps.JFR, Jetty: ps.Jetty, JFC: ps.JFC, Total: queueStats(&ps.Total)}, nil
}

// QueueStatsOf converts the driver's form of a queue's counters, as
// DescriptorOf and JettyIDOf convert theirs; package jetty's Stats methods
// use it.
func QueueStatsOf(p provider.QueueStats) QueueStats { return queueStats(&p) }

func queueStats(p *provider.QueueStats) QueueStats {
	s := QueueStats{Posted: p.Posted, Bytes: p.Bytes, RecvPosted: p.RecvPosted, PostErrors: p.PostErrors,
		RNRRetries: p.RNRRetries, Completions: p.Completions, Flushed: p.Flushed}
	for i, v := range p.Errors {
		if v == 0 || i == 0 {
			continue
		}
		if s.Errors == nil {
			s.Errors = map[CRStatus]uint64{}
		}
		st := CRStatus(i)
		if i == provider.StatusSlots-1 {
			st = CRSignatureErr
		}
		s.Errors[st] += v
	}
	return s
}

// PortCounters are the counters a device keeps for one of its ports, by
// the names the device gives them. On a verbs device (provider ib) they
// are the files of /sys/class/infiniband/<dev>/ports/<port>/counters
// (the standard port counters: port_xmit_data, port_rcv_packets, ...;
// the data counters in units of 4 bytes, as the InfiniBand spec has
// them) and hw_counters (the driver's own, e.g. rxe's rcvd_rnr_err,
// retry_exceeded_err, rdma_sends); a counter whose file cannot be read is
// absent. Soft devices have few or none: siw keeps neither directory.
type PortCounters struct {
	Port       int
	Counters   map[string]uint64
	HWCounters map[string]uint64
}

// PortCounters reads the counters of port (numbered from 1, see
// DeviceAttr.Ports). It fails with ErrNotSupported when the device keeps
// none (loopback) and ErrNotFound for a port it does not have.
func (d *Device) PortCounters(port int) (PortCounters, error) {
	sd, ok := d.p.(provider.StatsDevice)
	if !ok {
		return PortCounters{}, &OpError{Op: "port counters", Obj: d.String(),
			Err: provider.Errorf(ErrNotSupported, "device %s keeps no port counters", d.Name())}
	}
	pc, err := sd.PortCounters(port)
	if err != nil {
		return PortCounters{}, &OpError{Op: "port counters", Obj: d.String(), Err: err}
	}
	return PortCounters{Port: pc.Port, Counters: pc.Counters, HWCounters: pc.HWCounters}, nil
}
