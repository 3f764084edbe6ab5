package loopback

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/inbox"
)

// SetRuns turns the delivery of SEND runs (sendrun.go) on or off, so that a
// test can compare a post list delivered in runs with the same list
// delivered one request at a time. Only for tests, and only while no post
// is under way.
func SetRuns(on bool) { runsOff = !on }

// SetInboxEntryHook runs f first thing whenever an inbox's message is read
// (nil: nothing), and returns the restore. Only while no delivery
// is under way.
func SetInboxEntryHook(f func()) func() {
	inbox.EntryHook = f
	return func() { inbox.EntryHook = nil }
}

// Quarantined counts the segments whose memory was kept because an access
// still pinned them after the drain timeout.
func Quarantined() int {
	quarantined.mu.Lock()
	defer quarantined.mu.Unlock()
	return len(quarantined.entries)
}

// HoldQueue takes the lock of q, a JFS of this provider, as a post in
// progress holds it, and returns its release.
func HoldQueue(q provider.JFS) func() {
	s := q.(*jfsObj).sendq
	s.mu.Lock()
	return s.mu.Unlock
}

// PeerTeardowns returns, for each peer process c is linked to now, a
// channel closed once the link's teardown has unmapped the peer's memory.
func PeerTeardowns(c provider.Context) []<-chan struct{} {
	lc := c.(*lbContext)
	lc.peersMu.Lock()
	defer lc.peersMu.Unlock()
	var out []<-chan struct{}
	for _, p := range lc.peers {
		out = append(out, p.torn)
	}
	return out
}

// MarkJFRClosing sets the state word of j, a JFR of this provider, as its
// Close does right after it marks the object closed, and returns the
// restore: a post that got in before the mark sees this.
func MarkJFRClosing(j provider.JFR) func() {
	q := j.(*jfrObj).recvq
	q.setState(stateClosed)
	return func() { q.setState(uint32(provider.StateReady)) }
}

// EnterJFR counts a caller into j, a JFR of this provider, as a post of
// receives (posting) or a sender's delivery does, and returns its leave;
// ok is false when j is closed and nothing was counted.
func EnterJFR(j provider.JFR, posting bool) (leave func(), ok bool) {
	q := j.(*jfrObj).recvq
	if posting {
		return q.posting.leave, q.posting.enter(&q.closed)
	}
	return q.leave, q.enter()
}

// InboxSource is an inbox for a cross-process benchmark: this process puts
// messages, a peer process opens FD through /proc and drains them.
type InboxSource struct {
	FD  int
	box *inbox.Inbox
}

// NewInboxSource makes an inbox of cells cells.
func NewInboxSource(cells int) (*InboxSource, error) {
	b, err := inbox.New("bench-inbox", cells)
	if err != nil {
		return nil, err
	}
	return &InboxSource{FD: b.Ring().Mapping().FD(), box: b}, nil
}

// Put leaves msg as a SEND, spinning while the inbox is full.
func (s *InboxSource) Put(msg []byte) { s.PutImm(0, msg) }

// PutImm leaves msg as a SEND_IMM with immediate data imm, spinning while
// the inbox is full.
func (s *InboxSource) PutImm(imm uint64, msg []byte) {
	h := inbox.Header{Len: uint32(len(msg)), Opcode: uint8(provider.OpSendImm)}
	for {
		if _, ok := s.box.Put(h, imm, msg); ok {
			return
		}
	}
}

// TryPutImm is PutImm that gives up at once when the inbox is full.
func (s *InboxSource) TryPutImm(imm uint64, msg []byte) bool {
	h := inbox.Header{Len: uint32(len(msg)), Opcode: uint8(provider.OpSendImm)}
	_, ok := s.box.Put(h, imm, msg)
	return ok
}

// InboxMaxData is the longest message an inbox entry holds.
const InboxMaxData = inbox.MaxData

// InboxCheckMsg is the message PutImm leaves as number i in
// CheckInbox's stream: i % (InboxMaxData+1) bytes, byte k being i+k.
func InboxCheckMsg(i uint64) []byte {
	p := make([]byte, i%(inbox.MaxData+1))
	for k := range p {
		p[k] = byte(i + uint64(k))
	}
	return p
}

// CheckInbox maps the inbox of cells cells whose memfd fd is and reads n
// messages from it, which must be InboxCheckMsg(0) .. InboxCheckMsg(n-1)
// in order, with their numbers as immediate data.
func CheckInbox(fd int, cells int, n uint64) error {
	box, err := inbox.Attach(fd, cells)
	if err != nil {
		return err
	}
	defer box.Close()
	buf := make([]byte, inbox.MaxData)
	for i := uint64(0); i < n; {
		pos := box.Head()
		var e inbox.Entry
		if !box.Peek(pos, &e) {
			continue
		}
		got := buf[:box.CopyOut(&e, buf)]
		if want := InboxCheckMsg(i); e.Imm != i || !bytes.Equal(got, want) {
			return fmt.Errorf("message %d: imm %d, %x; want %x", i, e.Imm, got, want)
		}
		box.Consume(pos + e.Cells)
		i++
	}
	return nil
}

// Drained tells whether the consumer has read every message put.
func (s *InboxSource) Drained() bool { return s.box.Head() == atomic.LoadUint64(s.box.Ring().EnqPos()) }

// Close unmaps the inbox.
func (s *InboxSource) Close() { s.box.Close() }

// DrainInbox maps the inbox of cells cells whose memfd fd is (of this
// process, opened from the source's /proc entry) and consumes its messages
// as a receive queue delivering its own would: each copied into a buffer
// and made into a record, up to 16 a turn, until stop closes.
func DrainInbox(fd int, cells int, stop <-chan struct{}) error {
	box, err := inbox.Attach(fd, cells)
	if err != nil {
		return err
	}
	defer box.Close()
	var crs [16]provider.CR
	buf := make([]byte, inbox.MaxData)
	for turn := 0; ; turn++ {
		if drainTurn(box, crs[:], buf) > 0 {
			continue
		}
		if turn%1024 == 0 {
			select {
			case <-stop:
				return nil
			default:
			}
		}
	}
}

// SetInbox turns receiver-side delivery through inboxes (inboxsend.go) on
// or off, so that a test can compare the two ways. Only for tests, and only
// while no post is under way.
func SetInbox(on bool) { inboxOff = !on }

// InboxConsumed returns how many cells of j's inbox (j a JFR of this provider)
// have been consumed: a test's proof that its messages went that way.
func InboxConsumed(j provider.JFR) uint64 { return j.(*jfrObj).recvq.inbox.box.Head() }

// InboxPeer tells whether j, a JFS or Jetty of this provider, holds a route
// in the inbox of a queue of another process: its small SENDs went that
// way.
func InboxPeer(j any) bool {
	q := sendqOf(j)
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ib.v != nil && q.ib.v.peer != nil
}

// InboxRuns returns how many runs of a post list j (a JFS or Jetty of this
// provider) left in an inbox with one reservation each.
func InboxRuns(j any) uint64 {
	q := sendqOf(j)
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ib.runs
}

// sendqOf is the send queue of j, a JFS or Jetty of this provider.
func sendqOf(j any) *sendq {
	switch o := j.(type) {
	case *jfsObj:
		return o.sendq
	case *jettyObj:
		return o.sendq
	}
	panic(fmt.Sprintf("not a loopback JFS or Jetty: %T", j))
}

// SetInboxTick sets how often a queue with requests in an inbox looks at
// them when nobody polls (inboxsend.go), and returns the restore. Only for
// tests, and only while no queue has requests in an inbox.
func SetInboxTick(d time.Duration) (restore func()) {
	old := inboxTick
	inboxTick = d
	return func() { inboxTick = old }
}

// JFCEDescriptor is the eventfd of e, a JFCE of this provider.
func JFCEDescriptor(e provider.JFCE) int { return e.(*jfce).efd }

// RNRTick runs one tick of the RNR timer of q, a JFS of this provider, as
// the timer does when it fires.
func RNRTick(q provider.JFS) { q.(*jfsObj).sendq.tick() }
