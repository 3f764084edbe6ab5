package exutil

import (
	"fmt"

	_ "github.com/urma-go/sdk/provider/ib" // -provider ib (with the urma_verbs build tag)
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
)

// FindDevice returns the device named dev, of provider prov when prov is
// not empty.
func FindDevice(prov, dev string) (*urma.Device, error) {
	if prov == "" {
		return urma.DeviceByName(dev)
	}
	devs, err := urma.ProviderDevices(prov)
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		if d.Name() == dev {
			return d, nil
		}
	}
	return nil, fmt.Errorf("provider %s has no device %q", prov, dev)
}

// Open opens a context on EID eid of the device (FindDevice's arguments).
func Open(prov, dev string, eid int) (*urma.Context, error) {
	d, err := FindDevice(prov, dev)
	if err != nil {
		return nil, err
	}
	if eid < 0 || eid >= len(d.EIDs()) {
		return nil, fmt.Errorf("device %s has %d EIDs, no index %d", d.Name(), len(d.EIDs()), eid)
	}
	return urma.Open(d, eid, nil)
}
