//go:build linux && cgo && urma_verbs

package verbs

/*
#cgo LDFLAGS: -libverbs -lrdmacm
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// Transport types of a device (enum ibv_transport_type).
const (
	TransportIB    = C.IBV_TRANSPORT_IB
	TransportIWARP = C.IBV_TRANSPORT_IWARP
)

// Link layers of a port.
const (
	LinkLayerUnspecified = C.IBV_LINK_LAYER_UNSPECIFIED
	LinkLayerInfiniBand  = C.IBV_LINK_LAYER_INFINIBAND
	LinkLayerEthernet    = C.IBV_LINK_LAYER_ETHERNET
)

// GID types of a GID table entry.
const (
	GIDTypeIB     = C.IBV_GID_TYPE_IB
	GIDTypeRoCEv1 = C.IBV_GID_TYPE_ROCE_V1
	GIDTypeRoCEv2 = C.IBV_GID_TYPE_ROCE_V2
)

// Atomic capabilities (enum ibv_atomic_cap).
const (
	AtomicNone = C.IBV_ATOMIC_NONE
	AtomicHCA  = C.IBV_ATOMIC_HCA
	AtomicGlob = C.IBV_ATOMIC_GLOB
)

// Port states (enum ibv_port_state).
const (
	PortNOP         = C.IBV_PORT_NOP
	PortDown        = C.IBV_PORT_DOWN
	PortInit        = C.IBV_PORT_INIT
	PortArmed       = C.IBV_PORT_ARMED
	PortActive      = C.IBV_PORT_ACTIVE
	PortActiveDefer = C.IBV_PORT_ACTIVE_DEFER
)

// DeviceAttr is the part of ibv_device_attr the provider uses.
type DeviceAttr struct {
	NodeGUID         uint64
	MaxMRSize        uint64
	MaxQP, MaxQPWR   int
	MaxSGE, MaxSGERd int
	MaxCQ, MaxCQE    int
	MaxMR            int
	MaxSRQ, MaxSRQWR int
	MaxSRQSGE, MaxAH int
	MaxQPRdAtom      int
	MaxQPInitRdAtom  int
	AtomicCap        int
	DeviceCapFlags   uint32
	PhysPortCnt      int
	Transport        int
	VendorID, PartID uint32
}

// PortAttr is the part of ibv_port_attr the provider uses.
type PortAttr struct {
	Num         int
	State       int
	ActiveMTU   int // bytes
	MaxMsgSize  uint32
	ActiveWidth uint8
	ActiveSpeed uint8
	LinkLayer   uint8
	GIDTableLen int
}

// GID is one valid GID table entry.
type GID struct {
	Raw     [16]byte
	Index   int
	Port    int
	Type    int
	Ifindex int
}

// DeviceInfo is what Devices reports for one device.
type DeviceInfo struct {
	Name  string
	Attr  DeviceAttr
	Ports []PortAttr
	GIDs  []GID
}

func errnoOf(rc C.int) error {
	if rc < 0 {
		rc = -rc
	}
	return syscall.Errno(rc)
}

// Devices opens each verbs device of the host, queries it and closes it.
func Devices() ([]DeviceInfo, error) {
	var n C.int
	list, err := C.ibv_get_device_list(&n)
	if list == nil {
		if err == nil {
			err = syscall.ENODEV
		}
		return nil, fmt.Errorf("ibv_get_device_list: %w", err)
	}
	defer C.ibv_free_device_list(list)
	devs := unsafe.Slice(list, int(n))
	out := make([]DeviceInfo, 0, len(devs))
	for _, d := range devs {
		name := C.GoString(C.ibv_get_device_name(d))
		ctx, err := C.ibv_open_device(d)
		if ctx == nil {
			return nil, fmt.Errorf("ibv_open_device %s: %w", name, err)
		}
		info, err := queryDevice(ctx)
		C.ibv_close_device(ctx)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", name, err)
		}
		info.Name = name
		out = append(out, info)
	}
	return out, nil
}

func queryDevice(ctx *C.struct_ibv_context) (DeviceInfo, error) {
	var d C.struct_uv_dev
	if rc := C.uv_query_device(ctx, &d); rc != 0 {
		return DeviceInfo{}, fmt.Errorf("ibv_query_device: %w", errnoOf(rc))
	}
	info := DeviceInfo{Attr: DeviceAttr{
		NodeGUID: uint64(d.node_guid), MaxMRSize: uint64(d.max_mr_size),
		MaxQP: int(d.max_qp), MaxQPWR: int(d.max_qp_wr), MaxSGE: int(d.max_sge),
		MaxSGERd: int(d.max_sge_rd), MaxCQ: int(d.max_cq), MaxCQE: int(d.max_cqe),
		MaxMR: int(d.max_mr), MaxSRQ: int(d.max_srq), MaxSRQWR: int(d.max_srq_wr),
		MaxSRQSGE: int(d.max_srq_sge), MaxAH: int(d.max_ah),
		MaxQPRdAtom: int(d.max_qp_rd_atom), MaxQPInitRdAtom: int(d.max_qp_init_rd_atom),
		AtomicCap: int(d.atomic_cap), DeviceCapFlags: uint32(d.device_cap_flags),
		PhysPortCnt: int(d.phys_port_cnt), Transport: int(d.transport),
		VendorID: uint32(d.vendor_id), PartID: uint32(d.vendor_part_id),
	}}
	total := 0
	for p := 1; p <= info.Attr.PhysPortCnt; p++ {
		var pa C.struct_uv_port
		if rc := C.uv_query_port(ctx, C.uint8_t(p), &pa); rc != 0 {
			return DeviceInfo{}, fmt.Errorf("ibv_query_port %d: %w", p, errnoOf(rc))
		}
		info.Ports = append(info.Ports, PortAttr{
			Num: p, State: int(pa.state), ActiveMTU: mtuBytes(int(pa.active_mtu)),
			MaxMsgSize: uint32(pa.max_msg_sz), ActiveWidth: uint8(pa.active_width),
			ActiveSpeed: uint8(pa.active_speed), LinkLayer: uint8(pa.link_layer),
			GIDTableLen: int(pa.gid_tbl_len),
		})
		total += int(pa.gid_tbl_len)
	}
	if total > 0 {
		entries := make([]C.struct_ibv_gid_entry, total)
		n := C.uv_query_gid_table(ctx, &entries[0], C.long(total))
		if n < 0 {
			return DeviceInfo{}, fmt.Errorf("ibv_query_gid_table: %w", syscall.Errno(-n))
		}
		for _, e := range entries[:n] {
			info.GIDs = append(info.GIDs, GID{
				Raw: *(*[16]byte)(unsafe.Pointer(&e.gid)), Index: int(e.gid_index),
				Port: int(e.port_num), Type: int(e.gid_type), Ifindex: int(e.ndev_ifindex),
			})
		}
	}
	return info, nil
}

func mtuBytes(m int) int {
	if m < 1 || m > 5 {
		return 0
	}
	return 128 << m // IBV_MTU_256 is 1
}
