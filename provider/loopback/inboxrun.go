package loopback

import (
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/loopback/internal/inbox"
)

// inboxRunMax is the most SENDs of a post list one reservation of inbox
// cells covers.
const inboxRunMax = 32

// inboxRunData is where postInboxRun gathers a run's data before it
// reserves cells for it: once cells are reserved, every request they were
// reserved for must be written.
type inboxRunData struct {
	bufs [inboxRunMax][inbox.MaxData]byte
	data [inboxRunMax][]byte
}

// postInboxRun leaves a run of small SENDs from the start of a post list in
// their target's inbox, with one reservation of cells for all of them, and
// returns how many it posted; 0 when there is no run of at least two that
// may go to the inbox, and the caller posts wrs[0] its usual way. wrs[0]
// is validated already, and goes to rem.
//
// One reservation is the point: it is a locked instruction, which waits
// for the stores before it to own their lines, and those are the previous
// message's cells, on their way to the receiver's core.
//
// The run ends before the first request that is not a small SEND to the
// same receive queue, fails its checks, cannot gather its data or finds
// the queue full; that one is then posted (or fails) the usual way. The
// checks of inboxFits are made once, for the first request: they hold for
// the run's later ones.
func (q *sendq) postInboxRun(wrs []provider.WR, rem *remote) int {
	if len(wrs) < 2 || rem == nil || !q.inboxFits(q.head+1, rem) {
		return 0
	}
	out := q.head - q.loadCredited()
	if out >= uint64(q.depth) {
		return 0
	}
	room := uint64(q.depth) - out
	if q.inboxRun == nil {
		q.inboxRun = new(inboxRunData)
	}
	rd := q.inboxRun
	n, cells := 0, uint64(0)
	for n < len(wrs) && n < inboxRunMax && uint64(n) < room {
		w := &wrs[n]
		if !inboxShaped(w) {
			break
		}
		if n > 0 {
			if r, err := q.validate(w); err != nil || r != rem {
				break
			}
		}
		data, ok := q.dataOf(w, &rd.bufs[n])
		if !ok {
			break
		}
		rd.data[n] = data
		cells += inbox.Cells(len(data))
		n++
	}
	v := rem.rq
	if n < 2 || q.ib.v != v && !q.switchRoute(v) {
		return 0
	}
	box := v.inbox.box
	pos, ok := box.Reserve(cells)
	if !ok {
		return 0
	}
	solicited := false
	for i := range n {
		w, data := &wrs[i], rd.data[i]
		box.Write(pos, q.inboxHeaderOf(w, len(data)), w.Imm, data)
		q.head++
		k := inbox.Cells(len(data))
		q.noteInbox(w, q.head, rem, pos, k, len(data))
		pos += k
		solicited = solicited || w.Flags&provider.FlagSolicited != 0
		rd.data[i] = nil
	}
	v.jfc.notify(solicited)
	q.inboxPosted()
	q.ib.runs++
	return n
}
