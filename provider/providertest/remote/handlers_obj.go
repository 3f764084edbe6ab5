package remote

import (
	"context"

	"github.com/urma-go/sdk/provider"
)

// The peer's answers to requests on the objects a context made.

func init() {
	serve(rpcWait, (*session).wait)
	serve(rpcPoll, (*session).poll)
	serve(rpcRearm, (*session).rearm)
	serve(rpcAck, (*session).ack)
	serve(rpcModifyJFC, (*session).modifyJFC)
	serve(rpcPost, (*session).post)
	serve(rpcFlush, (*session).flush)
	serve(rpcAdvise, (*session).advise)
	serve(rpcUnadvise, (*session).unadvise)
	serve(rpcQuery, (*session).query)
	serve(rpcModifyState, (*session).modifyState)
	serve(rpcPostRecv, (*session).postRecv)
	serve(rpcBind, (*session).bind)
	serve(rpcUnbind, (*session).unbind)
}

// clampN keeps a count a provider returned within its slice, so a bad one
// cannot make the peer panic.
func clampN(n, limit int) int { return max(0, min(n, limit)) }

func (s *session) wait(a *waitArgs) (*waitReply, error) {
	e, err := get[provider.JFCE](s, a.H, "jfce")
	if err != nil {
		return nil, err
	}
	out := make([]any, clampBatch(a.N))
	ctx := context.Background()
	if a.Timeout >= 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.Timeout)
		defer cancel()
	}
	n, err := e.Wait(ctx, out)
	owners := make([]uint64, clampN(n, len(out)))
	for i := range owners {
		owners[i] = ownerID(out[i])
	}
	return &waitReply{N: n, Owners: owners}, err
}

func (s *session) poll(a *countArgs) (*crsReply, error) {
	j, err := get[provider.JFC](s, a.H, "jfc")
	if err != nil {
		return nil, err
	}
	crs := make([]provider.CR, clampBatch(a.N))
	n, err := j.Poll(crs)
	return &crsReply{N: n, CRs: crs[:clampN(n, len(crs))]}, err
}

func (s *session) rearm(a *rearmArgs) (*empty, error) {
	j, err := get[provider.JFC](s, a.H, "jfc")
	if err != nil {
		return nil, err
	}
	return nil, j.Rearm(a.SolicitedOnly)
}

func (s *session) ack(a *countArgs) (*empty, error) {
	j, err := get[provider.JFC](s, a.H, "jfc")
	if err != nil {
		return nil, err
	}
	return nil, j.Ack(a.N)
}

func (s *session) modifyJFC(a *modifyJFCArgs) (*empty, error) {
	j, err := get[provider.JFC](s, a.H, "jfc")
	if err != nil {
		return nil, err
	}
	return nil, j.Modify(a.Count, a.Period)
}

func (s *session) wr(w *wr) (provider.WR, error) {
	t, err := s.remote(w.Target)
	if err != nil {
		return provider.WR{}, err
	}
	local, err := s.sges(w.Local)
	if err != nil {
		return provider.WR{}, err
	}
	rm, err := s.memRef(w.Remote.Seg, w.Remote.Foreign)
	if err != nil {
		return provider.WR{}, err
	}
	out := provider.WR{Opcode: w.Opcode, Flags: w.Flags, UserCtx: w.UserCtx, Target: provider.Ref(t), Local: local,
		Remote: provider.SGE{Seg: rm, Addr: w.Remote.Addr, Len: w.Remote.Len}, Inline: w.Inline,
		Imm: w.Imm, Compare: w.Compare, Operand: w.Operand}
	nm, err := s.memRef(w.Notify.Seg, w.Notify.Foreign)
	if err != nil {
		return provider.WR{}, err
	}
	out.Notify = provider.SGE{Seg: nm, Addr: w.Notify.Addr, Len: w.Notify.Len}
	im, err := s.memRef(w.Invalidate.Seg, w.Invalidate.Foreign)
	if err != nil {
		return provider.WR{}, err
	}
	if im != nil {
		t, ok := im.(provider.Target)
		if !ok {
			return provider.WR{}, provider.Errorf(provider.ErrInvalid, "SEND_INVALIDATE names a segment that is not an import")
		}
		out.Invalidate = &t
	}
	return out, nil
}

func (s *session) post(a *postArgs) (*countReply, error) {
	snd, err := get[provider.Sender](s, a.H, "jfs or jetty")
	if err != nil {
		return nil, err
	}
	wrs := make([]provider.WR, len(a.WRs))
	bad, badErr := len(wrs), error(nil)
	for i := range a.WRs {
		if wrs[i], err = s.wr(&a.WRs[i]); err != nil {
			bad, badErr = i, err
			break
		}
	}
	n, err := postUpTo(wrs, bad, badErr, snd.Post)
	return &countReply{N: n}, err
}

func (s *session) postRecv(a *postRecvArgs) (*countReply, error) {
	r, err := get[interface {
		PostRecv([]provider.RecvWR) (int, error)
	}](s, a.H, "jfr or jetty")
	if err != nil {
		return nil, err
	}
	wrs := make([]provider.RecvWR, len(a.WRs))
	bad, badErr := len(wrs), error(nil)
	for i := range a.WRs {
		local, err := s.sges(a.WRs[i].Local)
		if err != nil {
			bad, badErr = i, err
			break
		}
		wrs[i] = provider.RecvWR{UserCtx: a.WRs[i].UserCtx, Local: local}
	}
	n, err := postUpTo(wrs, bad, badErr, r.PostRecv)
	return &countReply{N: n}, err
}

func (s *session) flush(a *countArgs) (*crsReply, error) {
	snd, err := get[provider.Sender](s, a.H, "jfs or jetty")
	if err != nil {
		return nil, err
	}
	crs := make([]provider.CR, clampBatch(a.N))
	n, err := snd.Flush(crs)
	return &crsReply{N: n, CRs: crs[:clampN(n, len(crs))]}, err
}

func (s *session) advise(a *remoteArgs) (*empty, error) {
	snd, err := get[provider.Sender](s, a.H, "jfs or jetty")
	if err != nil {
		return nil, err
	}
	r, err := s.remote(a.R)
	if err != nil {
		return nil, err
	}
	return nil, snd.Advise(context.Background(), r)
}

func (s *session) unadvise(a *remoteArgs) (*empty, error) {
	snd, err := get[provider.Sender](s, a.H, "jfs or jetty")
	if err != nil {
		return nil, err
	}
	r, err := s.remote(a.R)
	if err != nil {
		return nil, err
	}
	return nil, snd.Unadvise(r)
}

func (s *session) query(a *hArgs) (*queryReply, error) {
	q, err := get[interface {
		Query() (provider.QueueAttr, error)
	}](s, a.H, "queue")
	if err != nil {
		return nil, err
	}
	attr, err := q.Query()
	return &queryReply{Attr: attr}, err
}

func (s *session) modifyState(a *stateArgs) (*empty, error) {
	q, err := get[interface{ Modify(provider.State) error }](s, a.H, "queue")
	if err != nil {
		return nil, err
	}
	return nil, q.Modify(a.State)
}

func (s *session) bind(a *remoteArgs) (*empty, error) {
	j, err := get[provider.Jetty](s, a.H, "jetty")
	if err != nil {
		return nil, err
	}
	r, err := s.remote(a.R)
	if err != nil {
		return nil, err
	}
	return nil, j.Bind(context.Background(), r)
}

func (s *session) unbind(a *hArgs) (*empty, error) {
	j, err := get[provider.Jetty](s, a.H, "jetty")
	if err != nil {
		return nil, err
	}
	return nil, j.Unbind()
}
