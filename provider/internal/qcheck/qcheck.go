// Package qcheck holds the checks every provider makes of a queue's
// configuration against its device's attributes, so that each provider
// refuses the same configurations with the same errors. Defaults are the
// SDK's business (package jetty fills them in); a provider sees the
// numbers a queue is created with.
package qcheck

import "github.com/urma-go/sdk/provider"

// Send checks the configuration of a JFS, or of a Jetty's send side.
func Send(cfg *provider.JFSConfig, a *provider.DeviceAttr, device string) error {
	switch {
	case !cfg.Mode.Valid():
		return provider.Errorf(provider.ErrInvalid, "unknown transport mode %#x", uint8(cfg.Mode))
	case !a.SupportsMode(cfg.Mode):
		return provider.Errorf(provider.ErrNotSupported, "%v mode on %s", cfg.Mode, device)
	case cfg.Depth <= 0 || cfg.Depth > a.MaxJFSDepth:
		return provider.Errorf(provider.ErrInvalid, "jfs depth %d, device allows 1..%d", cfg.Depth, a.MaxJFSDepth)
	case cfg.MaxSGE <= 0 || cfg.MaxSGE > a.MaxJFSSGE:
		return provider.Errorf(provider.ErrInvalid, "jfs max sge %d, device allows 1..%d", cfg.MaxSGE, a.MaxJFSSGE)
	case cfg.MaxInline < 0 || cfg.MaxInline > a.MaxInline:
		return provider.Errorf(provider.ErrInvalid, "jfs max inline %d, device allows 0..%d", cfg.MaxInline, a.MaxInline)
	case cfg.RNRRetry < 0 || cfg.RNRRetry > 7:
		return provider.Errorf(provider.ErrInvalid, "rnr retry %d, 0..7 (7 retries forever)", cfg.RNRRetry)
	case cfg.RNRTimeout < 0:
		return provider.Errorf(provider.ErrInvalid, "rnr timeout %v is negative", cfg.RNRTimeout)
	}
	return sendKnobs(cfg, a, device)
}

// Recv checks the configuration of a JFR, or of a Jetty's own receive
// queue.
func Recv(cfg *provider.JFRConfig, a *provider.DeviceAttr, device string) error {
	switch {
	case !cfg.Mode.Valid():
		return provider.Errorf(provider.ErrInvalid, "unknown transport mode %#x", uint8(cfg.Mode))
	case !a.SupportsMode(cfg.Mode):
		return provider.Errorf(provider.ErrNotSupported, "%v mode on %s", cfg.Mode, device)
	case cfg.Depth <= 0 || cfg.Depth > a.MaxJFRDepth:
		return provider.Errorf(provider.ErrInvalid, "jfr depth %d, device allows 1..%d", cfg.Depth, a.MaxJFRDepth)
	case cfg.MaxSGE <= 0 || cfg.MaxSGE > a.MaxJFRSGE:
		return provider.Errorf(provider.ErrInvalid, "jfr max sge %d, device allows 1..%d", cfg.MaxSGE, a.MaxJFRSGE)
	case cfg.TokenPolicy > provider.TokenPlainText:
		return provider.Errorf(provider.ErrNotSupported, "token policy %v", cfg.TokenPolicy)
	}
	return recvKnobs(cfg, a, device)
}
