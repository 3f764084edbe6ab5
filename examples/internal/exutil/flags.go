package exutil

import (
	"flag"
	"fmt"
)

// ExitInterrupted is the exit status of a program stopped by Ctrl-C after
// it freed its resources (128 + SIGINT, as shells report it).
const ExitInterrupted = 130

// Common holds the flags every example takes.
type Common struct {
	Provider string
	Dev      string
	EID      int
	Mode     string
	Server   bool
	Client   bool
	Addr     string
}

// Register defines the flags on fs; defaultAddr is the example's
// out-of-band address.
func (c *Common) Register(fs *flag.FlagSet, defaultAddr string) {
	fs.StringVar(&c.Provider, "provider", "", "provider name (default: any provider that has -dev)")
	fs.StringVar(&c.Dev, "dev", "loopback0", "device name")
	fs.IntVar(&c.EID, "eid", -1, "EID index (default 0; 1 for the client in one process when the device has two)")
	fs.StringVar(&c.Mode, "mode", "poll", "completion mode: poll|event")
	fs.BoolVar(&c.Server, "server", false, "run the server only, waiting for a client on -addr")
	fs.BoolVar(&c.Client, "client", false, "run the client only, connecting to a server on -addr")
	fs.StringVar(&c.Addr, "addr", defaultAddr, "out-of-band TCP address (host:port) of the server")
}

// Validate checks the combination.
func (c *Common) Validate() error {
	if c.Mode != "poll" && c.Mode != "event" {
		return fmt.Errorf("-mode %q: want poll or event", c.Mode)
	}
	if c.Server && c.Client {
		return fmt.Errorf("-server and -client exclude each other (neither runs both in one process)")
	}
	return nil
}

// Event reports -mode event.
func (c *Common) Event() bool { return c.Mode == "event" }

// OneProcess reports that both sides run here.
func (c *Common) OneProcess() bool { return !c.Server && !c.Client }

// EIDFor returns the EID index a side uses: -eid when given, else 0, or 1
// for the client of a one-process run on a device with two EIDs.
func (c *Common) EIDFor(client bool) (int, error) {
	if c.EID >= 0 {
		return c.EID, nil
	}
	if !client || !c.OneProcess() {
		return 0, nil
	}
	d, err := FindDevice(c.Provider, c.Dev)
	if err != nil {
		return 0, err
	}
	return min(1, len(d.EIDs())-1), nil
}
