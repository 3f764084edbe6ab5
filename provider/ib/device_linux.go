//go:build cgo && urma_verbs

package ib

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"syscall"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/ib/internal/verbs"
	"github.com/urma-go/sdk/provider/internal/jgroup"
)

// eidEntry is one EID of a device and how to reach it: the address rdma_cm
// binds, the port, the GID index (the source of UD address handles) and the
// interface (the scope of a link-local address).
type eidEntry struct {
	eid      provider.EID
	addr     netip.Addr
	port     int
	gidIndex int
	gid      [16]byte
	ifindex  int
}

type device struct {
	info  verbs.DeviceInfo
	eids  []eidEntry
	attr  provider.DeviceAttr
	iwarp bool
}

// probes caches what opening a device tells per device name: probing
// creates a QP, too slow to repeat on every listing.
var probes sync.Map // string -> probed

// probed is what the SDK learns by opening a device.
type probed struct {
	inline int
	sig    verbs.SigCaps
}

func devices() ([]provider.Device, error) {
	infos, err := verbs.Devices()
	if err != nil {
		if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.ENODEV) {
			return nil, provider.Errorf(provider.ErrNotSupported, "no verbs support in this kernel: %v", err)
		}
		return nil, err
	}
	out := make([]provider.Device, 0, len(infos))
	for _, info := range infos {
		d := &device{info: info, eids: eidTable(info), iwarp: info.Attr.Transport == verbs.TransportIWARP}
		d.attr = d.mapAttr(probe(info.Name))
		out = append(out, d)
	}
	return out, nil
}

func probe(name string) probed {
	if v, ok := probes.Load(name); ok {
		return v.(probed)
	}
	var p probed
	if c, err := verbs.Open(name); err == nil {
		p.inline, _ = c.ProbeMaxInline(1024)
		p.sig, _ = c.QuerySigCaps()
		_ = c.Close()
	}
	probes.Store(name, p)
	return p
}

// eidTable builds the EID table from the GID table. A RoCE GID is an IP
// address already. InfiniBand and iWARP GIDs are not, and rdma_cm needs an
// IP address (IPoIB, or the iWARP netdev's), so their EIDs are the
// addresses of the GID's network interface. Routable addresses come
// before link-local ones, so EID 0 is the one a peer elsewhere can reach.
func eidTable(info verbs.DeviceInfo) []eidEntry {
	var routable, local []eidEntry
	seen := map[netip.Addr]bool{}
	add := func(e eidEntry) {
		if seen[e.addr] {
			return
		}
		seen[e.addr] = true
		if e.addr.Is6() && e.addr.IsLinkLocalUnicast() {
			local = append(local, e)
		} else {
			routable = append(routable, e)
		}
	}
	hasV2 := false
	for _, g := range info.GIDs {
		hasV2 = hasV2 || g.Type == verbs.GIDTypeRoCEv2
	}
	for _, g := range info.GIDs {
		switch {
		case g.Type == verbs.GIDTypeRoCEv2 || (g.Type == verbs.GIDTypeRoCEv1 && !hasV2):
			a := netip.AddrFrom16(g.Raw)
			add(eidEntry{eid: provider.EID(g.Raw), addr: a.Unmap(), port: g.Port, gidIndex: g.Index, gid: g.Raw, ifindex: g.Ifindex})
		case g.Type == verbs.GIDTypeIB:
			for _, a := range interfaceAddrs(g) {
				add(eidEntry{eid: provider.EIDFromAddr(a), addr: a, port: g.Port, gidIndex: g.Index, gid: g.Raw, ifindex: g.Ifindex})
			}
		}
	}
	return append(routable, local...)
}

// interfaceAddrs finds the IP addresses of a GID's network interface: by
// its ifindex when the kernel reports one (iWARP), or for InfiniBand the
// IPoIB interface whose hardware address ends with the GID. Interfaces of
// other network namespaces are invisible here, and so are their EIDs.
func interfaceAddrs(g verbs.GID) []netip.Addr {
	var ifc *net.Interface
	if g.Ifindex > 0 {
		ifc, _ = net.InterfaceByIndex(g.Ifindex)
	} else if all, err := net.Interfaces(); err == nil {
		for i := range all {
			hw := all[i].HardwareAddr
			if len(hw) == 20 && [16]byte(hw[4:]) == g.Raw {
				ifc = &all[i]
			}
		}
	}
	if ifc == nil {
		return nil
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out
}

// siwVendorID is soft-iWARP's vendor id ("bmt", its author's initials).
const siwVendorID = 0x626d74

// Per-lane speeds of ibv_port_attr.active_speed, in Mb/s, and lanes of
// active_width.
var (
	laneMbps = map[uint8]uint64{1: 2500, 2: 5000, 4: 10000, 8: 10000, 16: 14000, 32: 25000, 64: 50000, 128: 100000}
	lanes    = map[uint8]uint64{1: 1, 2: 4, 4: 8, 8: 12, 16: 2}
)

func (d *device) transport() provider.TransportType {
	switch {
	case d.iwarp:
		return provider.TransportIWARP
	case len(d.info.Ports) > 0 && d.info.Ports[0].LinkLayer == verbs.LinkLayerEthernet:
		return provider.TransportRoCE
	}
	return provider.TransportIB
}

func (d *device) mapAttr(p probed) provider.DeviceAttr {
	a := d.info.Attr
	attr := provider.DeviceAttr{
		Transport: d.transport(),
		GUID:      a.NodeGUID,
		MaxJFC:    a.MaxCQ, MaxJFS: a.MaxQP, MaxJFR: a.MaxSRQ, MaxJetty: a.MaxQP,
		MaxJFCDepth: a.MaxCQE, MaxJFSDepth: a.MaxQPWR, MaxJFRDepth: a.MaxSRQWR,
		MaxJFSSGE: a.MaxSGE, MaxJFRSGE: a.MaxSRQSGE, MaxReadSGE: max(1, min(a.MaxSGE, a.MaxSGERd)),
		MaxInline:  p.inline,
		MaxMsgSize: 1 << 31,
		Modes:      provider.RM | provider.RC,
		MaxEIDs:    len(d.eids),
	}
	if a.AtomicCap != verbs.AtomicNone {
		attr.AtomicOps = provider.AtomicOpsOf(provider.OpCAS, provider.OpFAdd)
		attr.AtomicSize = 8
	}
	// WRITE_NOTIFY is two WRITEs on one connection (notify_linux.go);
	// SEND_INVALIDATE has no verbs form for the MRs segments are.
	attr.WriteNotify = true
	if a.Transport == verbs.TransportIB {
		// iWARP has no immediate data, no RNR (a SEND that finds no
		// receive terminates the connection) and no UD.
		attr.ImmData, attr.RNR, attr.RemoteStatus = true, true, true
		if a.MaxAH > 0 {
			attr.Modes |= provider.UM
		}
	}
	// Views take the software path on every device, mlx5 included: the
	// offload shim (internal/verbs/mlx5.c) is compiled but not wired.
	attr.Views, attr.SigOffload = provider.ViewSoftware, p.sig.Offload
	// Jetty groups (group_linux.go): their members are listed in an
	// import's answer, which bounds how many a group holds.
	attr.MaxJettyGroups, attr.MaxJettiesInGroup = jgroup.MaxGroups, maxGroupMembers
	// siw's receive completions never count as solicited, so a
	// solicited-only arm would never fire.
	attr.SolicitedEvents = a.VendorID != siwVendorID
	// Queue knobs: an SRQ limit is the receive threshold; an RC
	// connection delivers in order (OL) and can promise less (NO), not
	// the target's or the initiator's ordering; the ACK timeout is
	// err_timeout where there are ACKs to time (not iWARP, which rides
	// TCP). Verbs has no suspend on error.
	attr.RxThreshold = a.MaxSRQ > 0
	attr.OrderCap = provider.OrderCapOf(provider.OrderOL, provider.OrderNO)
	attr.ErrTimeout = a.Transport == verbs.TransportIB
	for _, p := range d.info.Ports {
		attr.Ports = append(attr.Ports, provider.PortAttr{
			State:     provider.PortState(p.State),
			MTU:       p.ActiveMTU,
			SpeedMbps: laneMbps[p.ActiveSpeed] * lanes[p.ActiveWidth],
		})
		if p.MaxMsgSize > 0 && uint64(p.MaxMsgSize) < attr.MaxMsgSize {
			attr.MaxMsgSize = uint64(p.MaxMsgSize)
		}
		if attr.SupportsMode(provider.UM) && p.ActiveMTU > 0 &&
			(attr.MaxUMMsgSize == 0 || uint64(p.ActiveMTU) < attr.MaxUMMsgSize) {
			attr.MaxUMMsgSize = uint64(p.ActiveMTU)
		}
	}
	return attr
}

func (d *device) Name() string              { return d.info.Name }
func (d *device) Attr() provider.DeviceAttr { return d.attr }

func (d *device) EIDs() []provider.EID {
	out := make([]provider.EID, len(d.eids))
	for i, e := range d.eids {
		out[i] = e.eid
	}
	return out
}

func (d *device) Open(eidIndex int) (provider.Context, error) {
	if eidIndex < 0 || eidIndex >= len(d.eids) {
		return nil, provider.Errorf(provider.ErrInvalid, "eid index %d out of range: %s has %d EIDs in this network namespace",
			eidIndex, d.info.Name, len(d.eids))
	}
	return openContext(d, d.eids[eidIndex])
}
