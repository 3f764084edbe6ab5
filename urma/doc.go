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
//	uctx, err := urma.Open(dev, 0, nil)
//	defer uctx.Close()
//
// Memory is registered with package segment and moved with package jetty;
// package bootstrap hands descriptors and tokens to a peer, and package view
// puts layouts and block signatures on the data path. The values URMA
// numbers (opcodes, completion statuses, states, transport modes, event
// types, log levels) have UMDK's numbers, so that they mean here what they
// mean in C; the SDK's own values lie outside UMDK's ranges.
//
// A parameter named uctx is a *Context; ctx is always a context.Context.
package urma
