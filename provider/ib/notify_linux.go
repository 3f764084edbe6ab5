//go:build cgo && urma_verbs

package ib

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
	"github.com/urma-go/sdk/provider/internal/wrcheck"
)

// A WRITE_NOTIFY is two RDMA WRITEs on the request's RC connection under
// one slot and one wr_id: the data, unsignaled, then the 8 bytes of notify
// data, which carries the request's flags. A connection executes its
// WRITEs in order, and places each one's data before it starts the next
// (rxe and siw copy packet after packet; a NIC's PCIe writes are posted
// in order), so the notify word lands after the data. Verbs has no
// WRITE_NOTIFY of its own.

// notifyArea holds each slot's notify data while its WRITE runs: the
// second WRITE's source, registered for local access only.
type notifyArea struct {
	mem []byte
	mr  *verbs.MR
}

// ready registers the area for a ring of n slots, once.
func (a *notifyArea) ready(c *ibContext, n int) error {
	if a.mr != nil {
		return nil
	}
	size := (n*wrcheck.NotifyLen + unix.Getpagesize() - 1) &^ (unix.Getpagesize() - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return provider.Errorf(provider.ErrNoMemory, "WRITE_NOTIFY area: %v", err)
	}
	mr, err := c.vc.RegMR(unsafe.Pointer(&mem[0]), uintptr(len(mem)), verbs.AccessLocalWrite)
	if err != nil {
		_ = unix.Munmap(mem)
		return verbsErr("register WRITE_NOTIFY area", err)
	}
	a.mem, a.mr = mem, mr
	return nil
}

// free unregisters the area, once no QP of the queue can read it.
func (a *notifyArea) free() {
	if a.mr != nil {
		_ = a.mr.Dereg()
		_ = unix.Munmap(a.mem)
		a.mem, a.mr = nil, nil
	}
}

// notifyRoom tells whether the send queue has the second entry a
// WRITE_NOTIFY takes, besides the slot the full check found.
func (q *sendq) notifyRoom() bool {
	return q.head-q.tail+q.extra+1 < uint64(q.depth)
}

// validateNotify is validate's part for WRITE_NOTIFY: the notify target an
// import of this context that grants WRITE, the queue deep enough for the
// two WRITEs, and the area for the notify data registered.
func (q *sendq) validateNotify(w *provider.WR) error {
	t, ok := w.Notify.Seg.(*target)
	if !ok || t == nil || t.ctx != q.ctx {
		return provider.Errorf(provider.ErrInvalid, "WRITE_NOTIFY needs a target segment imported into this context in Notify")
	}
	if t.closed.Load() {
		return errClosed("notify target segment")
	}
	if err := wrcheck.Notify(w, t.desc); err != nil {
		return err
	}
	if q.depth < 2 {
		return provider.Errorf(provider.ErrInvalid, "WRITE_NOTIFY takes two send queue entries on %s; the queue's depth is %d", q.ctx.dev.info.Name, q.depth)
	}
	if err := q.notify.ready(q.ctx, len(q.slots)); err != nil {
		return err
	}
	q.ntg = t
	return nil
}

// buildNotify is build for the WRITE_NOTIFY w, whose notify target
// validate left in q.ntg.
func (q *sendq) buildNotify(w *provider.WR, tg *target, seq uint64, idx int) {
	data := *w
	data.Opcode = provider.OpWrite
	data.Flags &^= provider.FlagSignaled | provider.FlagSolicited
	q.build(&data, tg, nil, seq, idx)

	i := seq & q.mask
	word := q.notify.mem[i*wrcheck.NotifyLen : (i+1)*wrcheck.NotifyLen]
	binary.NativeEndian.PutUint64(word, w.Imm)
	var sge verbs.SGE
	sge.Set(uint64(uintptr(unsafe.Pointer(&word[0]))), wrcheck.NotifyLen, q.notify.mr.LKey)
	off := len(q.sges)
	q.sges = append(q.sges, sge)
	flags := uint8(0)
	signaled := w.Flags&provider.FlagSignaled != 0
	// On iWARP a signaled WRITE completes once TCP has it: a READ behind
	// it confirms it, as build does for a WRITE.
	confirm := q.ctx.dev.iwarp && signaled
	if signaled && !confirm {
		flags |= verbs.SendSignaled
	}
	id := uint64(q.cid)<<32 | uint64(uint32(seq))
	var vw verbs.SendWR
	vw.Set(id, verbs.WRWrite, flags, off, 1)
	vw.SetRemote(w.Notify.Addr, q.ntg.rkey)
	q.wrs = append(q.wrs, vw)
	q.wrIdx = append(q.wrIdx, idx)
	if confirm {
		var rd verbs.SendWR
		q.sges = append(q.sges, q.ctx.zeroSGE())
		rd.Set(id, verbs.WRRead, verbs.SendSignaled, len(q.sges)-1, 1)
		q.wrs = append(q.wrs, rd)
		q.wrIdx = append(q.wrIdx, idx)
	}
}
