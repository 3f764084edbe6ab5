//go:build cgo && urma_verbs

package ib

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
)

// UM is UD. A UM JFR (or a UM Jetty's own JFR) has a UD QP on its SRQ; a
// UM JFS has one UD QP it sends from, and an address handle per remote.
// Before its first datagram to a remote, a sender introduces its QP in an
// opDatagram request, which checks the token like an import and answers
// with the receiver's QP number, qkey and GID. A receive then names its
// sender by (source GID, source QP), which the introduction mapped to the
// sender's URMA id.

// udKey identifies a UD sender as a receive sees it: its QP number and
// the low 64 bits of the GID it sends from (the IPv4 address or IPv6
// interface id on RoCE, the port GUID on InfiniBand).
type udKey struct {
	iid uint64
	qpn uint32
}

func gidIID(gid [16]byte) uint64 { return binary.BigEndian.Uint64(gid[8:]) }

// udRecv is the datagram side of a UM JFR. Every receive it posts starts
// with a provider-owned SGE for the routing header the device writes in
// front of each datagram.
type udRecv struct {
	qp   *verbs.QP
	qkey uint32
	grh  []byte // verbs.GRHSize per receive slot
	mr   *verbs.MR
}

// openUD gives a UM JFR its UD QP. The qkey is random: only a sender that
// presented the token learns it, and the device drops datagrams without it.
func (j *jfr) openUD() error {
	c := j.ctx
	var b [4]byte
	_, _ = rand.Read(b[:])
	u := &udRecv{qkey: binary.BigEndian.Uint32(b[:]) &^ (1 << 31)} // high-bit qkeys are privileged
	var err error
	if u.grh, err = unix.Mmap(-1, 0, j.depth*verbs.GRHSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS); err != nil {
		return provider.Errorf(provider.ErrNoMemory, "routing header buffers: %v", err)
	}
	if u.mr, err = c.vc.RegMR(unsafe.Pointer(&u.grh[0]), uintptr(len(u.grh)), verbs.AccessLocalWrite); err != nil {
		_ = unix.Munmap(u.grh)
		return verbsErr("register routing header buffers", err)
	}
	if u.qp, err = c.vc.NewUDQP(c.ctl, j.jfc.cq, j.srq, verbs.QPCaps{MaxSendWR: 1, MaxSendSGE: 1}, c.eid.port, u.qkey); err != nil {
		_ = u.mr.Dereg()
		_ = unix.Munmap(u.grh)
		return verbsErr("create UD QP", err)
	}
	j.ud = u
	c.hub.watchQP(u.qp.Num, func(verbs.AsyncEvent) { c.events.Raise(provider.EventJFRErr, &j.src, 0) })
	return nil
}

// closeUD destroys u's QP (before the SRQ it receives from) and frees the
// header buffers; u is the JFR's ud, or was.
func (j *jfr) closeUD(u *udRecv) {
	if u == nil {
		return
	}
	j.ctx.hub.unwatchQP(u.qp.Num)
	_ = u.qp.Destroy()
	_ = u.mr.Dereg()
	_ = unix.Munmap(u.grh)
}

// grhSGE is the header SGE of receive slot.
func (u *udRecv) grhSGE(slot uint32) verbs.SGE {
	var s verbs.SGE
	s.Set(uint64(uintptr(unsafe.Pointer(&u.grh[int(slot)*verbs.GRHSize]))), verbs.GRHSize, u.mr.LKey)
	return s
}

// sender names the sender of the datagram received in slot.
func (j *jfr) udSender(wc *verbs.WC, slot uint32) provider.JettyID {
	gid, ok := verbs.GRHSource(j.ud.grh[int(slot)*verbs.GRHSize:][:verbs.GRHSize])
	if !ok {
		return provider.JettyID{}
	}
	j.pmu.RLock()
	defer j.pmu.RUnlock()
	return j.udPeers[udKey{iid: gidIID(gid), qpn: wc.SrcQP()}]
}

// answerDatagram registers a UM sender with the JFR or Jetty it names.
func (c *ibContext) answerDatagram(r request) (reply, error) {
	rq, _, err := c.receiver(r)
	if err != nil {
		return reply{}, err
	}
	if rq.ud == nil {
		return reply{}, provider.Errorf(provider.ErrInvalid, "%v %d has no UD QP", r.kind, r.target)
	}
	rq.pmu.Lock()
	rq.udPeers[udKey{iid: r.srcIID, qpn: r.srcQPN}] = provider.JettyID{EID: r.srcEID, UASID: r.srcUASID, ID: r.srcID}
	rq.pmu.Unlock()
	return reply{qpn: rq.ud.qp.Num, qkey: rq.ud.qkey, id: rq.id, gid: c.eid.gid}, nil
}

// udDest is where a UM queue's datagrams to one remote go.
type udDest struct {
	ah        *verbs.AH
	qpn, qkey uint32
}

// udConn returns the queue's UD QP, creating it on first use; it stands
// in the place of a connection, so slot accounting treats it as one.
func (q *sendq) udConn() (*conn, error) {
	if q.ud != nil {
		return q.ud, nil
	}
	c := q.ctx
	caps := verbs.QPCaps{MaxSendWR: q.depth, MaxSendSGE: q.maxSGE, MaxInline: q.maxInline}
	qp, err := c.vc.NewUDQP(q.jfc.cq, c.ctl, nil, caps, c.eid.port, 0)
	if err != nil {
		return nil, verbsErr("create UD QP", err)
	}
	cn := &conn{qp: qp}
	c.hub.watchQP(qp.Num, func(verbs.AsyncEvent) { q.connDown(cn) })
	q.ud = cn
	return cn, nil
}

// dest returns the address of remote r, introducing the queue's QP to it
// on first use.
func (q *sendq) dest(ctx context.Context, r *remote) (*udDest, error) {
	if d := q.dests[r]; d != nil {
		return d, nil
	}
	c := q.ctx
	src := c.sourceEntry(r.desc.ID.EID.Addr().Unmap())
	req := request{op: opDatagram, target: r.desc.ID.ID, token: r.token, kind: r.desc.Kind, mode: r.desc.Mode,
		policy: r.desc.TokenPolicy, srcEID: c.eid.eid, srcUASID: c.uasid, srcID: q.id,
		srcQPN: q.ud.qp.Num, srcIID: gidIID(src.gid)}
	d, err := c.dial(ctx, r.desc.ID.EID, r.desc.ID.UASID, req, c.probeQP)
	if err != nil {
		return nil, err
	}
	if err := d.reply.err("datagram route to " + r.desc.String()); err != nil {
		return nil, err
	}
	ah, err := c.vc.NewAH(src.port, d.reply.gid, src.gidIndex)
	if err != nil {
		return nil, verbsErr("address handle to "+r.desc.ID.EID.String(), err)
	}
	dst := &udDest{ah: ah, qpn: d.reply.qpn, qkey: d.reply.qkey}
	q.dests[r] = dst
	return dst, nil
}

// dropUD destroys the UD QP and address handles; the next datagram makes
// new ones (and introduces the new QP again).
func (q *sendq) dropUD() {
	if q.ud != nil {
		q.ctx.hub.unwatchQP(q.ud.qp.Num)
		_ = q.ud.qp.Destroy()
		q.ud = nil
	}
	for r, d := range q.dests {
		_ = d.ah.Destroy()
		delete(q.dests, r)
	}
}
