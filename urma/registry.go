package urma

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/urma-go/sdk/provider"
)

var registry struct {
	mu      sync.RWMutex
	drivers map[string]provider.Driver
}

// Register makes a provider available by its name. Providers call it from
// init; registering a name twice panics, as database/sql does, because it is
// a programming error found at start-up.
func Register(d provider.Driver) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if d == nil {
		panic("urma: Register of a nil driver")
	}
	if registry.drivers == nil {
		registry.drivers = map[string]provider.Driver{}
	}
	if _, dup := registry.drivers[d.Name()]; dup {
		panic("urma: Register called twice for provider " + d.Name())
	}
	registry.drivers[d.Name()] = d
}

// Providers returns the sorted names of the registered providers.
func Providers() []string {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	names := make([]string, 0, len(registry.drivers))
	for n := range registry.drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func driver(name string) (provider.Driver, error) {
	registry.mu.RLock()
	d := registry.drivers[name]
	registry.mu.RUnlock()
	if d == nil {
		return nil, &OpError{Op: "open provider", Err: provider.Errorf(ErrNotFound,
			"unknown provider %q (forgotten import?)", name)}
	}
	return d, nil
}

// ProviderDevices lists the devices of one provider. An unregistered name
// gives an error saying the import is probably missing.
func ProviderDevices(name string) ([]*Device, error) {
	d, err := driver(name)
	if err != nil {
		return nil, err
	}
	pdevs, err := d.Devices()
	if err != nil {
		return nil, &OpError{Op: "list devices", Obj: "of provider " + name, Err: err}
	}
	devs := make([]*Device, len(pdevs))
	for i, pd := range pdevs {
		devs[i] = &Device{provider: name, p: pd}
	}
	return devs, nil
}

// Devices lists the devices of every registered provider, ordered by
// provider name. Providers that cannot run here (no hardware, no cgo) are
// skipped; an error is returned only when no provider is registered.
func Devices() ([]*Device, error) {
	all, _, err := devices()
	return all, err
}

// devices is Devices, with why each skipped provider was skipped.
func devices() (all []*Device, skipped []string, err error) {
	names := Providers()
	if len(names) == 0 {
		return nil, nil, &OpError{Op: "list devices", Err: provider.Errorf(ErrNotFound,
			"no provider registered (import one, e.g. _ \"github.com/urma-go/sdk/provider/loopback\")")}
	}
	for _, n := range names {
		devs, err := ProviderDevices(n)
		if err != nil {
			if errors.Is(err, ErrNotSupported) {
				provider.Logf(provider.LogInfo, "urma: provider %s: %v", n, err)
				why := err
				if u := errors.Unwrap(err); u != nil {
					why = u // the provider's reason, without this call's prefix
				}
				skipped = append(skipped, "provider "+n+" ("+why.Error()+")")
				continue
			}
			return nil, nil, err
		}
		all = append(all, devs...)
	}
	return all, skipped, nil
}

// DeviceByName finds a device by name across providers. When none has
// it, the error lists the devices there are and the providers skipped,
// with the reason (a provider built without its build tag, for one).
func DeviceByName(name string) (*Device, error) {
	devs, skipped, err := devices()
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		if d.Name() == name {
			return d, nil
		}
	}
	return nil, &OpError{Op: "find device", Err: provider.Errorf(ErrNotFound, "no device named %q%s", name, notFound(devs, skipped))}
}

// notFound says what a lookup found instead: the devices, and the
// providers skipped and why.
func notFound(devs []*Device, skipped []string) string {
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.Name()
	}
	s := "; devices: none"
	if len(names) > 0 {
		s = "; devices: " + strings.Join(names, ", ")
	}
	if len(skipped) > 0 {
		s += "; skipped: " + strings.Join(skipped, "; ")
	}
	return s
}

// DeviceByEID finds the device that has eid in its EID table.
func DeviceByEID(eid EID) (*Device, error) {
	devs, err := Devices()
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		if d.EIDIndex(eid) >= 0 {
			return d, nil
		}
	}
	_, skipped, _ := devices()
	return nil, &OpError{Op: "find device", Err: provider.Errorf(ErrNotFound, "no device has eid %v%s", eid, notFound(devs, skipped))}
}

// Device is a URMA device of some provider.
type Device struct {
	provider string
	p        provider.Device
}

// Name is the device name, unique across providers.
func (d *Device) Name() string { return d.p.Name() }

// Provider is the name of the provider the device belongs to.
func (d *Device) Provider() string { return d.provider }

// Attr returns the device's capabilities.
func (d *Device) Attr() DeviceAttr { return deviceAttrOf(d.p.Attr()) }

// EIDs returns the device's EID table.
func (d *Device) EIDs() []EID {
	p := d.p.EIDs()
	eids := make([]EID, len(p))
	for i, e := range p {
		eids[i] = EID(e)
	}
	return eids
}

// EIDIndex returns the index of eid in the EID table, or -1.
func (d *Device) EIDIndex(eid EID) int {
	for i, e := range d.p.EIDs() {
		if EID(e) == eid {
			return i
		}
	}
	return -1
}

// Raw returns the provider's device, for provider-specific extensions.
func (d *Device) Raw() provider.Device { return d.p }

// String is "provider/name".
func (d *Device) String() string { return fmt.Sprintf("%s/%s", d.provider, d.p.Name()) }
