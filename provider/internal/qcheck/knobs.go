package qcheck

import "github.com/urma-go/sdk/provider"

// sendKnobs checks a send queue's optional knobs against the device: a
// knob the device cannot honour is refused with ErrNotSupported, naming
// the attribute that says so.
func sendKnobs(cfg *provider.JFSConfig, a *provider.DeviceAttr, device string) error {
	switch {
	case cfg.ErrorSuspend && !a.ErrorSuspend:
		return provider.Errorf(provider.ErrNotSupported, "error suspend on %s (DeviceAttr.ErrorSuspend is false)", device)
	case cfg.ErrTimeout > 32:
		return provider.Errorf(provider.ErrInvalid, "err timeout code %d, 0..31", cfg.ErrTimeout-1)
	case cfg.ErrTimeout != 0 && !a.ErrTimeout:
		return provider.Errorf(provider.ErrNotSupported, "err timeout on %s (DeviceAttr.ErrTimeout is false)", device)
	case !cfg.Order.Valid():
		return provider.Errorf(provider.ErrInvalid, "order type %v", cfg.Order)
	case cfg.Mode == provider.UM && cfg.Order != provider.OrderDefault && cfg.Order != provider.OrderNO:
		return provider.Errorf(provider.ErrNotSupported, "order %v on a UM queue: datagrams have none", cfg.Order)
	case cfg.Mode != provider.UM && !a.OrderCap.Has(cfg.Order):
		return provider.Errorf(provider.ErrNotSupported, "order %v on %s, which offers %v (DeviceAttr.OrderCap)", cfg.Order, device, a.OrderCap)
	}
	return nil
}

// recvKnobs checks a receive queue's optional knobs against the device.
func recvKnobs(cfg *provider.JFRConfig, a *provider.DeviceAttr, device string) error {
	return RxThreshold(cfg.RxThreshold, cfg.Depth, a, device)
}

// RxThreshold checks a receive threshold for a queue of depth receives.
func RxThreshold(n, depth int, a *provider.DeviceAttr, device string) error {
	switch {
	case n < 0 || n > depth:
		return provider.Errorf(provider.ErrInvalid, "rx threshold %d, queue allows 0..%d (its depth)", n, depth)
	case n != 0 && !a.RxThreshold:
		return provider.Errorf(provider.ErrNotSupported, "rx threshold on %s (DeviceAttr.RxThreshold is false)", device)
	}
	return nil
}
