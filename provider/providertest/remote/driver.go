package remote

import (
	"slices"

	"github.com/urma-go/sdk/provider"
)

// driver is the provider each Peer registers with urma, so that contexts
// in the peer are ordinary *urma.Context values here. Its devices are the
// peer's devices that Peer.Open asked for; once the peer is closed it has
// none, so urma.Devices keeps working for everyone else.
type driver struct{ p *Peer }

func (d driver) Name() string { return d.p.name }

func (d driver) Devices() ([]provider.Device, error) {
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	if d.p.closed {
		return nil, nil
	}
	devs := make([]provider.Device, len(d.p.devs))
	for i, x := range d.p.devs {
		devs[i] = x
	}
	return devs, nil
}

// device mirrors one device of the peer. Its name is prefixed with the
// driver's because device names must be unique across providers and the
// peer's device is usually registered in this process too.
type device struct {
	p        *Peer
	name     string
	peerName string
	attr     provider.DeviceAttr
	eids     []provider.EID
}

func (d *device) Name() string { return d.name }

func (d *device) Attr() provider.DeviceAttr {
	a := d.attr
	a.Ports = slices.Clone(a.Ports)
	// A proxied target cannot be mapped into this process: its import
	// lives in the peer.
	a.MapImports = false
	return a
}

func (d *device) EIDs() []provider.EID { return slices.Clone(d.eids) }

func (d *device) Open(eidIndex int) (provider.Context, error) {
	r, err := rpcOpen.call(d.p.c, &openArgs{Device: d.peerName, EIDIndex: eidIndex})
	if err != nil {
		return nil, err
	}
	c := &pContext{obj: obj{p: d.p, h: r.H}, eid: r.EID, uasid: r.UASID,
		segs: map[*pSegment]struct{}{}, events: map[uint64]uint64{}}
	if !d.p.track(c) {
		_ = c.Close()
		return nil, provider.Errorf(provider.ErrClosed, "the peer is closed")
	}
	return c, nil
}
