package loopback

import (
	"net/netip"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/provider/internal/jgroup"
	"github.com/urma-go/sdk/provider/loopback/internal/sg"
	"github.com/urma-go/sdk/urma"
)

// Name is the provider's registry name.
const Name = "loopback"

// DeviceName is the name of the provider's only device.
const DeviceName = "loopback0"

func init() { urma.Register(New()) }

// New returns the loopback driver, for callers that want it without the
// registry. All drivers share one fabric.
func New() provider.Driver { return driver{} }

type driver struct{}

func (driver) Name() string { return Name }

func (driver) Devices() ([]provider.Device, error) { return []provider.Device{theDevice}, nil }

type device struct{ eids []provider.EID }

var theDevice = &device{eids: func() []provider.EID {
	e := make([]provider.EID, 4)
	for i := range e {
		e[i] = provider.EIDFromAddr(netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)}))
	}
	return e
}()}

// Limits of the loopback device.
const (
	maxObjects = 1 << 16
	maxDepth   = 1 << 15
	maxSGE     = sg.MaxSGE
	maxInline  = 1024
	maxMsgSize = 1 << 30
	maxSegment = maxMsgSize * 16
)

// queueLimits are the device's attributes that queue configurations are
// checked against.
var queueLimits = (&device{}).Attr()

// loopbackAtomics is every URMA atomic: loopback executes them on the CPU.
var loopbackAtomics = provider.AtomicOpsOf(provider.OpCAS, provider.OpSwap, provider.OpFAdd,
	provider.OpFSub, provider.OpFAnd, provider.OpFOr, provider.OpFXor)

func (d *device) Name() string { return DeviceName }

func (d *device) Attr() provider.DeviceAttr {
	return provider.DeviceAttr{
		Transport: provider.TransportLoopback,
		GUID:      0x75726d61_6c6f6f70, // "urmaloop"
		MaxJFC:    maxObjects, MaxJFS: maxObjects, MaxJFR: maxObjects, MaxJetty: maxObjects,
		MaxJFCDepth: maxDepth, MaxJFSDepth: maxDepth, MaxJFRDepth: maxDepth,
		MaxJFSSGE: maxSGE, MaxJFRSGE: maxSGE, MaxReadSGE: maxSGE,
		MaxInline:       maxInline,
		MaxMsgSize:      maxMsgSize,
		MaxUMMsgSize:    maxMsgSize,
		AtomicOps:       loopbackAtomics,
		AtomicSize:      8,
		Modes:           provider.RM | provider.RC | provider.UM,
		MaxEIDs:         len(d.eids),
		ImmData:         true,
		RNR:             true,
		RemoteStatus:    true,
		SolicitedEvents: true,
		SolicitedInCR:   true,
		Ports:           []provider.PortAttr{{State: provider.PortActive, MTU: 4096}},

		// Allocated segments are memfds an importer can map.
		MapImports: true,

		SendInvalidate: true,
		WriteNotify:    true,

		// A queue's requests take effect at their targets in posting
		// order (a request that is not a small SEND waits for the
		// queue's SENDs in inboxes): every order type holds. Nothing
		// waits for an answer, so there is no err_timeout.
		RxThreshold:  true,
		ErrorSuspend: true,
		OrderCap:     provider.OrderCapOf(provider.OrderOT, provider.OrderOI, provider.OrderOL, provider.OrderNO),

		// Jetty groups (group.go).
		MaxJettyGroups: jgroup.MaxGroups, MaxJettiesInGroup: maxGroupMembers,
	}
}

func (d *device) EIDs() []provider.EID { return append([]provider.EID(nil), d.eids...) }

func (d *device) Open(eidIndex int) (provider.Context, error) {
	if eidIndex < 0 || eidIndex >= len(d.eids) {
		return nil, provider.Errorf(provider.ErrInvalid, "eid index %d out of range", eidIndex)
	}
	c, err := newContext(d.eids[eidIndex])
	if err != nil {
		return nil, err
	}
	return c, nil
}
