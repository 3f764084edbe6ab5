package ib

import (
	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Name is the provider's registry name.
const Name = "ib"

func init() { urma.Register(New()) }

// New returns the ib driver, for callers that want it without the registry.
func New() provider.Driver { return driver{} }

type driver struct{}

func (driver) Name() string { return Name }

func (driver) Devices() ([]provider.Device, error) { return devices() }
