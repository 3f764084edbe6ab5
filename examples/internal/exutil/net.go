package exutil

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"strconv"

	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/urmanet"
)

// Net holds the flags of the examples that run a net/http or gRPC
// service over urmanet: no out-of-band channel, the client finds the
// server by its urmanet address.
type Net struct {
	Provider string
	Dev      string
	EID      int
	Server   bool
	Client   bool
	// Addr is the urmanet address: "eid:port", or ":port" for the
	// device's EID 0 (the server's own EID when it listens).
	Addr string
	Poll bool
}

// Register defines the flags on fs; port is the example's default
// urmanet port.
func (n *Net) Register(fs *flag.FlagSet, port int) {
	fs.StringVar(&n.Provider, "provider", "", "provider name (default: any provider that has -dev)")
	fs.StringVar(&n.Dev, "dev", "loopback0", "device name")
	fs.IntVar(&n.EID, "eid", -1, "EID index (default 0; 1 for the client in one process when the device has two)")
	fs.BoolVar(&n.Server, "server", false, "run the server only, listening on -addr")
	fs.BoolVar(&n.Client, "client", false, "run the client only, dialling -addr")
	fs.StringVar(&n.Addr, "addr", ":"+strconv.Itoa(port), "urmanet address eid:port (:port is EID 0 of -dev; port 0 picks a free one)")
	fs.BoolVar(&n.Poll, "poll", false, "connections poll without ever sleeping (default: spin, then sleep)")
}

// Validate checks the combination.
func (n *Net) Validate() error {
	if n.Server && n.Client {
		return errors.New("-server and -client exclude each other (neither runs both in one process)")
	}
	host, port, err := net.SplitHostPort(n.Addr)
	if err != nil {
		return fmt.Errorf("-addr %q: want eid:port or :port", n.Addr)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return fmt.Errorf("-addr %q: port %q is not a number from 0 to 65535", n.Addr, port)
	}
	if p == 0 && n.Client {
		return fmt.Errorf("-addr %q: a client dials a port from 1 to 65535", n.Addr)
	}
	if host != "" {
		if _, err := urma.ParseEID(host); err != nil {
			return fmt.Errorf("-addr %q: %w", n.Addr, err)
		}
	}
	return nil
}

// OneProcess reports that both sides run here.
func (n *Net) OneProcess() bool { return !n.Server && !n.Client }

// Open opens the context of one side, on -eid, or as Common.EIDFor picks.
func (n *Net) Open(client bool) (*urma.Context, error) {
	c := Common{Provider: n.Provider, Dev: n.Dev, EID: n.EID, Server: n.Server, Client: n.Client}
	eid, err := c.EIDFor(client)
	if err != nil {
		return nil, err
	}
	return Open(n.Provider, n.Dev, eid)
}

// Listen listens on -addr of uctx.
func (n *Net) Listen(uctx *urma.Context) (net.Listener, error) {
	lc := urmanet.ListenConfig{Poll: n.Poll}
	return lc.Listen(uctx, n.Addr)
}

// Target is the address a client-only run dials: -addr, with EID 0 of the
// device when it names none.
func (n *Net) Target() (string, error) {
	host, port, err := net.SplitHostPort(n.Addr)
	if err != nil {
		return "", err
	}
	if host != "" {
		return n.Addr, nil
	}
	d, err := FindDevice(n.Provider, n.Dev)
	if err != nil {
		return "", err
	}
	p, _ := strconv.ParseUint(port, 10, 16)
	return urmanet.Addr{EID: d.EIDs()[0], Port: uint16(p)}.String(), nil
}

// Dialer returns a dial function for uctx, in the shape net/http's
// Transport.DialContext and gRPC's WithContextDialer take (the network
// argument is left out): the address is a urmanet one.
func (n *Net) Dialer(uctx *urma.Context) func(ctx context.Context, addr string) (net.Conn, error) {
	d := urmanet.Dialer{Poll: n.Poll}
	return func(ctx context.Context, addr string) (net.Conn, error) {
		return d.Dial(ctx, uctx, addr)
	}
}
