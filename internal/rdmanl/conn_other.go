//go:build !linux

package rdmanl

import (
	"context"
	"errors"

	"github.com/urma-go/sdk/provider"
)

// Conn is a socket on the kernel's RDMA netlink, which only Linux has.
type Conn struct{}

// ErrNoDevice is returned by DeviceByName for a name the kernel does not
// know.
var ErrNoDevice = errors.New("rdmanl: no such RDMA device")

var errNoNetlink = provider.Errorf(provider.ErrNotSupported, "rdmanl: RDMA netlink is a Linux interface")

// Dial fails everywhere but on Linux, with an error matching
// provider.ErrNotSupported.
func Dial() (*Conn, error) { return nil, errNoNetlink }

// Close does nothing.
func (c *Conn) Close() error { return nil }

// Devices fails: see Dial.
func (c *Conn) Devices(context.Context) ([]Device, error) { return nil, errNoNetlink }

// DeviceByName fails: see Dial.
func (c *Conn) DeviceByName(context.Context, string) (Device, error) { return Device{}, errNoNetlink }

// QPs fails: see Dial.
func (c *Conn) QPs(context.Context, Device) ([]QP, error) { return nil, errNoNetlink }

// CQs fails: see Dial.
func (c *Conn) CQs(context.Context, Device) ([]CQ, error) { return nil, errNoNetlink }

// MRs fails: see Dial.
func (c *Conn) MRs(context.Context, Device) ([]MR, error) { return nil, errNoNetlink }

// SRQs fails: see Dial.
func (c *Conn) SRQs(context.Context, Device) ([]SRQ, error) { return nil, errNoNetlink }
