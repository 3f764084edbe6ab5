package loopback

import "github.com/urma-go/sdk/provider"

// suspend is fail's end for a queue made with ErrorSuspend, under the
// queue's lock, once the failed request (of sequence seq) has its record:
// the queue goes to SUSPENDED, keeps the requests behind the failed one
// pending, unrun, and marks the point with a WR_SUSPEND_DONE record.
// Modify to READY resumes them (resume); Flush hands them back.
func (q *sendq) suspend(seq uint64) {
	q.state = provider.StateSuspended
	cr := provider.CR{Status: provider.CRWRSuspendDone, Flags: provider.CRFlagSuspendDone, LocalID: q.id}
	if q.jetty != nil {
		cr.Flags |= provider.CRFlagJetty
	}
	// The sequence is the failed request's, whose slot its own record
	// frees already: crediting it again changes nothing.
	q.jfc.view.push(&cr, seq)
}

// resume takes a suspended queue back to READY and runs its pending
// requests in order, under the queue's lock.
func (q *sendq) resume() {
	q.state = provider.StateReady
	q.retries = 0
	q.progress(retryKick)
}
