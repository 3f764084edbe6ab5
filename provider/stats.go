package provider

// Counters a provider keeps for urma's Stats calls. Each is optional: a
// provider object that does not implement the interface makes the user
// package's Stats return ErrNotSupported.

// StatusSlots is the length of QueueStats.Errors: a slot per UMDK status
// (0 to CRRemDataPoison) and one, the last, for CRSignatureErr and any
// status beyond UMDK's.
const StatusSlots = int(CRRemDataPoison) + 2

// StatusSlot is the index of st in QueueStats.Errors.
func StatusSlot(st CRStatus) int {
	if st <= CRRemDataPoison {
		return int(st)
	}
	return StatusSlots - 1
}

// QueueStats are the counters of one queue; a field a queue kind does not
// keep stays zero (see urma.QueueStats for their meaning).
type QueueStats struct {
	Posted, Bytes, RecvPosted, PostErrors, RNRRetries, Completions, Flushed uint64
	// Errors counts completion records by status slot (StatusSlot); the
	// success slot is unused.
	Errors [StatusSlots]uint64
}

// Add adds o's counters to s.
func (s *QueueStats) Add(o *QueueStats) {
	s.Posted += o.Posted
	s.Bytes += o.Bytes
	s.RecvPosted += o.RecvPosted
	s.PostErrors += o.PostErrors
	s.RNRRetries += o.RNRRetries
	s.Completions += o.Completions
	s.Flushed += o.Flushed
	for i := range s.Errors {
		s.Errors[i] += o.Errors[i]
	}
}

// ContextStats are the counters of a context.
type ContextStats struct {
	// Live objects of the context.
	JFS, JFR, Jetty, JFC int
	// Total sums the counters of every queue of the context, closed ones
	// included.
	Total QueueStats
}

// StatsQueue is implemented by a JFS, JFR, Jetty or JFC that keeps
// counters. Stats is safe for concurrent use with the queue's other
// methods, and fails with ErrClosed once the queue is closed.
type StatsQueue interface {
	Stats() (QueueStats, error)
}

// StatsContext is implemented by a context that keeps counters.
type StatsContext interface {
	Stats() (ContextStats, error)
}

// PortCounters are the counters a device keeps for one port, by the names
// the device gives them (for a verbs device, the files of its port's
// counters and hw_counters directories).
type PortCounters struct {
	Port       int
	Counters   map[string]uint64
	HWCounters map[string]uint64
}

// StatsDevice is implemented by a device that reports port counters.
type StatsDevice interface {
	// PortCounters reads the counters of port (numbered from 1).
	PortCounters(port int) (PortCounters, error)
}
