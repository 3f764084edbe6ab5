// Package urma is the entry point of the SDK: the provider registry, devices
// and their attributes, EIDs, contexts, async events, logging, errors and the
// URMA enums.
//
// A program imports a provider for its side effect, picks a device and opens
// a context on one of its EIDs:
//
//	import _ "github.com/urma-go/sdk/provider/loopback"
//
//	dev, err := urma.DeviceByName("loopback0")
//	ctx, err := urma.Open(dev, 0, nil)
//	defer ctx.Close()
//
// Memory is registered with package segment and moved with package jetty.
package urma
