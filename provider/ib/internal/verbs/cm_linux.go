//go:build linux && cgo && urma_verbs

package verbs

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"net/netip"
	"syscall"
	"unsafe"
)

// rdma_cm event types the provider handles.
const (
	CMAddrResolved   = C.RDMA_CM_EVENT_ADDR_RESOLVED
	CMAddrError      = C.RDMA_CM_EVENT_ADDR_ERROR
	CMRouteResolved  = C.RDMA_CM_EVENT_ROUTE_RESOLVED
	CMRouteError     = C.RDMA_CM_EVENT_ROUTE_ERROR
	CMConnectRequest = C.RDMA_CM_EVENT_CONNECT_REQUEST
	CMConnectError   = C.RDMA_CM_EVENT_CONNECT_ERROR
	CMUnreachable    = C.RDMA_CM_EVENT_UNREACHABLE
	CMRejected       = C.RDMA_CM_EVENT_REJECTED
	CMEstablished    = C.RDMA_CM_EVENT_ESTABLISHED
	CMDisconnected   = C.RDMA_CM_EVENT_DISCONNECTED
	CMDeviceRemoval  = C.RDMA_CM_EVENT_DEVICE_REMOVAL
)

// CMEventName is rdma_event_str.
func CMEventName(t int) string { return C.GoString(C.rdma_event_str(uint32(t))) }

// EventChannel is an rdma_cm event channel with a non-blocking fd.
type EventChannel struct{ ch *C.struct_rdma_event_channel }

// NewEventChannel creates a channel.
func NewEventChannel() (*EventChannel, error) {
	ch, err := C.rdma_create_event_channel()
	if ch == nil {
		return nil, fmt.Errorf("rdma_create_event_channel: %w", err)
	}
	if err := syscall.SetNonblock(int(C.uv_cm_channel_fd(ch)), true); err != nil {
		C.rdma_destroy_event_channel(ch)
		return nil, err
	}
	return &EventChannel{ch: ch}, nil
}

// FD is readable when an event is pending.
func (e *EventChannel) FD() int { return int(C.uv_cm_channel_fd(e.ch)) }

// Destroy destroys the channel; its ids must be gone.
func (e *EventChannel) Destroy() { C.rdma_destroy_event_channel(e.ch) }

// CMID is an rdma_cm identifier. It is a comparable handle: events name
// ids by it.
type CMID struct{ p *C.struct_rdma_cm_id }

// IsZero reports whether the handle names no id.
func (id CMID) IsZero() bool { return id.p == nil }

// CMEvent is a copy of one rdma_cm event, already acknowledged.
type CMEvent struct {
	Type        int
	Status      int
	ID          CMID
	Listen      CMID
	PrivateData []byte
}

// GetEvent returns the next event; ok is false when none is pending.
func (e *EventChannel) GetEvent() (ev CMEvent, ok bool, err error) {
	var c C.struct_uv_cm_event
	rc := C.uv_get_cm_event(e.ch, &c)
	if rc < 0 {
		return ev, false, fmt.Errorf("rdma_get_cm_event: %w", errnoOf(rc))
	}
	if rc == 0 {
		return ev, false, nil
	}
	ev = CMEvent{Type: int(c.event), Status: int(c.status), ID: CMID{c.id}, Listen: CMID{c.listen_id}}
	if c.private_data_len > 0 {
		ev.PrivateData = C.GoBytes(unsafe.Pointer(&c.private_data[0]), C.int(c.private_data_len))
	}
	return ev, true, nil
}

// NewID creates an id for reliable connections on channel ch.
func (e *EventChannel) NewID() (CMID, error) {
	var id *C.struct_rdma_cm_id
	if rc, err := C.rdma_create_id(e.ch, &id, nil, C.RDMA_PS_TCP); rc != 0 {
		return CMID{}, fmt.Errorf("rdma_create_id: %w", err)
	}
	return CMID{id}, nil
}

// Migrate moves the id's events to channel ch.
func (id CMID) Migrate(ch *EventChannel) error {
	if rc, err := C.rdma_migrate_id(id.p, ch.ch); rc != 0 {
		return fmt.Errorf("rdma_migrate_id: %w", err)
	}
	return nil
}

func addr16(a netip.Addr) [16]byte { return a.As16() }

// Bind binds the id to a local address and port (0 picks one).
func (id CMID) Bind(a netip.Addr, port uint16, scope uint32) error {
	b := addr16(a)
	if rc := C.uv_cm_bind(id.p, (*C.uint8_t)(&b[0]), C.uint16_t(port), C.uint32_t(scope)); rc != 0 {
		return fmt.Errorf("rdma_bind_addr %v: %w", a, errnoOf(rc))
	}
	return nil
}

// Listen starts listening for connection requests.
func (id CMID) Listen(backlog int) error {
	if rc, err := C.rdma_listen(id.p, C.int(backlog)); rc != 0 {
		return fmt.Errorf("rdma_listen: %w", err)
	}
	return nil
}

// SrcPort is the bound local port.
func (id CMID) SrcPort() uint16 { return uint16(C.uv_cm_src_port(id.p)) }

// Peer is the address and port of the other end, invalid for families
// other than IP.
func (id CMID) Peer() netip.AddrPort {
	var a [16]byte
	var port C.uint16_t
	if C.uv_cm_peer(id.p, (*C.uint8_t)(&a[0]), &port) != 0 {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(netip.AddrFrom16(a).Unmap(), uint16(port))
}

// OnContext reports whether the id is bound to the device of c, so a QP of
// c's PD can be created on it.
func (id CMID) OnContext(c *Context) bool { return C.uv_cm_verbs(id.p) == c.c }

// ResolveAddr starts resolving dst from src; CMAddrResolved follows.
func (id CMID) ResolveAddr(src netip.Addr, srcScope uint32, dst netip.Addr, dstPort uint16, dstScope uint32, timeoutMs int) error {
	s, d := addr16(src), addr16(dst)
	if rc := C.uv_cm_resolve_addr(id.p, (*C.uint8_t)(&s[0]), C.uint32_t(srcScope),
		(*C.uint8_t)(&d[0]), C.uint16_t(dstPort), C.uint32_t(dstScope), C.int(timeoutMs)); rc != 0 {
		return fmt.Errorf("rdma_resolve_addr %v: %w", dst, errnoOf(rc))
	}
	return nil
}

// ResolveRoute starts resolving the route; CMRouteResolved follows.
func (id CMID) ResolveRoute(timeoutMs int) error {
	if rc, err := C.rdma_resolve_route(id.p, C.int(timeoutMs)); rc != 0 {
		return fmt.Errorf("rdma_resolve_route: %w", err)
	}
	return nil
}

// QPCaps sizes a QP created on an id.
type QPCaps struct {
	MaxSendWR, MaxSendSGE, MaxInline, MaxRecvWR int
}

// CreateQP creates an RC QP on the id, on c's PD, sending into scq and
// receiving from srq into rcq.
func (id CMID) CreateQP(c *Context, scq, rcq *CQ, srq *SRQ, caps QPCaps) (*QP, error) {
	var s *C.struct_ibv_srq
	if srq != nil {
		s = srq.srq
	}
	createMu.Lock()
	rc := C.uv_cm_create_qp(id.p, c.pd, scq.cq, rcq.cq, s, C.uint32_t(caps.MaxSendWR),
		C.uint32_t(caps.MaxSendSGE), C.uint32_t(caps.MaxInline), C.uint32_t(caps.MaxRecvWR))
	createMu.Unlock()
	if rc != 0 {
		return nil, fmt.Errorf("rdma_create_qp: %w", errnoOf(rc))
	}
	return &QP{qp: id.p.qp, Num: uint32(C.uv_cm_qp_num(id.p))}, nil
}

// DestroyQP destroys the QP made by CreateQP.
func (id CMID) DestroyQP() { C.rdma_destroy_qp(id.p) }

// Connect sends a connection request carrying pdata.
func (id CMID) Connect(pdata []byte, retry, rnrRetry, rdAtomic int) error {
	var p unsafe.Pointer
	if len(pdata) > 0 {
		p = unsafe.Pointer(&pdata[0])
	}
	if rc := C.uv_cm_connect(id.p, p, C.uint8_t(len(pdata)), C.uint8_t(retry), C.uint8_t(rnrRetry), C.uint8_t(rdAtomic)); rc != 0 {
		return fmt.Errorf("rdma_connect: %w", errnoOf(rc))
	}
	return nil
}

// Accept accepts a connection request with reply data pdata; rnrRetry is
// the RNR retry count the initiator's QP gets.
func (id CMID) Accept(pdata []byte, rdAtomic, rnrRetry int) error {
	var p unsafe.Pointer
	if len(pdata) > 0 {
		p = unsafe.Pointer(&pdata[0])
	}
	if rc := C.uv_cm_accept(id.p, p, C.uint8_t(len(pdata)), C.uint8_t(rdAtomic), C.uint8_t(rnrRetry)); rc != 0 {
		return fmt.Errorf("rdma_accept: %w", errnoOf(rc))
	}
	return nil
}

// Reject refuses a connection request with reply data pdata.
func (id CMID) Reject(pdata []byte) error {
	var p unsafe.Pointer
	if len(pdata) > 0 {
		p = unsafe.Pointer(&pdata[0])
	}
	if rc, err := C.rdma_reject(id.p, p, C.uint8_t(len(pdata))); rc != 0 {
		return fmt.Errorf("rdma_reject: %w", err)
	}
	return nil
}

// Disconnect tears the connection down; the QP goes to ERROR.
func (id CMID) Disconnect() error {
	if rc, err := C.rdma_disconnect(id.p); rc != 0 {
		return fmt.Errorf("rdma_disconnect: %w", err)
	}
	return nil
}

// Destroy destroys the id; its QP must be gone.
func (id CMID) Destroy() error {
	if rc, err := C.rdma_destroy_id(id.p); rc != 0 {
		return fmt.Errorf("rdma_destroy_id: %w", err)
	}
	return nil
}
