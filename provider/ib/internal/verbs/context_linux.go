//go:build linux && cgo && urma_verbs

package verbs

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// Context is an open device with one protection domain. Its verbs context
// is librdmacm's, so QPs created through rdma_cm share the PD.
type Context struct {
	list *(*C.struct_ibv_context)
	c    *C.struct_ibv_context
	pd   *C.struct_ibv_pd
	Name string
	Info DeviceInfo
}

// Open opens the device called name.
func Open(name string) (*Context, error) {
	var n C.int
	list, err := C.rdma_get_devices(&n)
	if list == nil {
		return nil, fmt.Errorf("rdma_get_devices: %w", err)
	}
	var ctx *C.struct_ibv_context
	for _, c := range unsafe.Slice(list, int(n)) {
		if C.GoString(C.uv_context_name(c)) == name {
			ctx = c
		}
	}
	if ctx == nil {
		C.rdma_free_devices(list)
		return nil, fmt.Errorf("rdma_get_devices: no device %q: %w", name, syscall.ENODEV)
	}
	info, err := queryDevice(ctx)
	if err != nil {
		C.rdma_free_devices(list)
		return nil, err
	}
	info.Name = name
	pd, err := C.ibv_alloc_pd(ctx)
	if pd == nil {
		C.rdma_free_devices(list)
		return nil, fmt.Errorf("ibv_alloc_pd: %w", err)
	}
	return &Context{list: list, c: ctx, pd: pd, Name: name, Info: info}, nil
}

// Close frees the PD and releases the device. Every object of the context
// must be destroyed first.
func (c *Context) Close() error {
	if c.pd != nil {
		if rc := C.ibv_dealloc_pd(c.pd); rc != 0 {
			return fmt.Errorf("ibv_dealloc_pd: %w", syscall.Errno(rc))
		}
		c.pd = nil
	}
	if c.list != nil {
		C.rdma_free_devices(c.list)
		c.list = nil
	}
	return nil
}

// ProbeMaxInline returns the largest inline size (up to hint) the device
// grants an RC QP.
func (c *Context) ProbeMaxInline(hint int) (int, error) {
	rc := C.uv_probe_max_inline(c.c, c.pd, C.int(hint))
	if rc < 0 {
		return 0, fmt.Errorf("probe inline size: %w", errnoOf(rc))
	}
	return int(rc), nil
}

// AsyncFD is the descriptor ibv_get_async_event reads.
func (c *Context) AsyncFD() int { return int(C.uv_async_fd(c.c)) }

// SetAsyncNonblock makes the async event descriptor non-blocking, for a
// Waiter.
func (c *Context) SetAsyncNonblock() error { return syscall.SetNonblock(c.AsyncFD(), true) }

// AsyncEvent is one verbs async event. Element is a QP number, the
// Context value of a CQ or SRQ, or zero; Port is set for port events. It
// must be acknowledged with Ack once handled.
type AsyncEvent struct {
	Type    int
	Element uint64
	Port    int
	raw     C.struct_ibv_async_event
}

// Async event types the provider distinguishes.
const (
	EventCQErr       = C.IBV_EVENT_CQ_ERR
	EventQPFatal     = C.IBV_EVENT_QP_FATAL
	EventQPReqErr    = C.IBV_EVENT_QP_REQ_ERR
	EventQPAccessErr = C.IBV_EVENT_QP_ACCESS_ERR
	EventSRQErr      = C.IBV_EVENT_SRQ_ERR
	EventSRQLimit    = C.IBV_EVENT_SRQ_LIMIT_REACHED
	EventPortActive  = C.IBV_EVENT_PORT_ACTIVE
	EventPortErr     = C.IBV_EVENT_PORT_ERR
	EventDeviceFatal = C.IBV_EVENT_DEVICE_FATAL
)

// EventName is ibv_event_type_str.
func EventName(t int) string { return C.GoString(C.ibv_event_type_str(uint32(t))) }

// GetAsyncEvent reads one event; ok is false when none is pending (the fd
// must be non-blocking). The event must be acknowledged with Ack.
func (c *Context) GetAsyncEvent() (ev *AsyncEvent, ok bool, err error) {
	var typ, port C.int
	var elem C.uint64_t
	ev = &AsyncEvent{}
	rc := C.uv_get_async_event(c.c, &ev.raw, &typ, &elem, &port)
	if rc < 0 {
		return nil, false, fmt.Errorf("ibv_get_async_event: %w", errnoOf(rc))
	}
	if rc == 0 {
		return nil, false, nil
	}
	ev.Type, ev.Element, ev.Port = int(typ), uint64(elem), int(port)
	return ev, true, nil
}

// Ack acknowledges the event; destroying the object it names waits for it.
func (ev *AsyncEvent) Ack() { C.uv_ack_async_event(&ev.raw) }

// MR is a registered memory region.
type MR struct {
	mr   *C.struct_ibv_mr
	LKey uint32
	RKey uint32
}

// Access flags of RegMR.
const (
	AccessLocalWrite   = C.IBV_ACCESS_LOCAL_WRITE
	AccessRemoteWrite  = C.IBV_ACCESS_REMOTE_WRITE
	AccessRemoteRead   = C.IBV_ACCESS_REMOTE_READ
	AccessRemoteAtomic = C.IBV_ACCESS_REMOTE_ATOMIC
)

// RegMR registers n bytes at addr, which must not be Go heap memory.
func (c *Context) RegMR(addr unsafe.Pointer, n uintptr, access int) (*MR, error) {
	mr, err := C.ibv_reg_mr(c.pd, addr, C.size_t(n), C.int(access))
	if mr == nil {
		if err == nil {
			err = syscall.ENOMEM
		}
		return nil, err
	}
	return &MR{mr: mr, LKey: uint32(C.uv_mr_lkey(mr)), RKey: uint32(C.uv_mr_rkey(mr))}, nil
}

// Dereg unregisters the region.
func (m *MR) Dereg() error {
	if rc := C.ibv_dereg_mr(m.mr); rc != 0 {
		return fmt.Errorf("ibv_dereg_mr: %w", syscall.Errno(rc))
	}
	return nil
}
