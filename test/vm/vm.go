// Package vm lets tests find the real RDMA devices inside the qemu guest that
// test/vm/run boots: Soft-RoCE on rxe0, soft-iWARP on siw0, and two hosts in
// network namespaces joined by a veth pair, each with its own rxe device.
//
// Tests that need kernel verbs call Require, which skips with instructions
// outside the guest, and run in it with
//
//	go test -exec "$PWD/test/vm/run" ./provider/ib/...
//
// The guest's init script (test/vm/guest-init) exports the names and
// addresses as URMA_VM_* variables; this package reads them and checks that
// the devices are really there.
package vm

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Transport is how a device carries RDMA traffic.
type Transport string

// The transports of the guest's devices.
const (
	RoCE  Transport = "RoCE"  // rdma_rxe: InfiniBand transport over UDP/IP
	IWARP Transport = "iWARP" // siw: RDMA over TCP, connections through rdma_cm only
)

// Device is one RDMA device in the guest and the network device under it.
type Device struct {
	Name      string     // RDMA device name, as ibv_devices prints it
	Netdev    string     // the network interface the device is bound to
	Addr      netip.Addr // the interface's IPv4 address
	Transport Transport
	// Netns is the network namespace the interface lives in; empty for the
	// guest's initial namespace. RDMA devices themselves are visible from
	// every namespace, but rdma_cm and the address only work inside it.
	Netns string
}

// Env is the set of devices the guest provides.
type Env struct {
	RXE Device // Soft-RoCE on its own dummy interface
	SIW Device // soft-iWARP on another dummy interface
	// HostA and HostB are the two ends of the veth pair, each in its own
	// network namespace: traffic between them crosses a (virtual) wire.
	HostA, HostB Device
}

// Devices lists every device of the environment.
func (e Env) Devices() []Device { return []Device{e.RXE, e.SIW, e.HostA, e.HostB} }

// Inside reports whether this process runs in the test guest.
func Inside() bool { return os.Getenv("URMA_VM") == "1" }

// ErrOutside is returned by Lookup outside the test guest.
var ErrOutside = errors.New("vm: not inside the test VM (URMA_VM is not 1)")

// Lookup describes the guest's devices from the environment and checks that
// each one exists and its port is active.
func Lookup() (Env, error) {
	if !Inside() {
		return Env{}, ErrOutside
	}
	env, err := parse(os.Getenv)
	if err != nil {
		return Env{}, err
	}
	for _, d := range env.Devices() {
		if err := d.check(); err != nil {
			return Env{}, err
		}
	}
	return env, nil
}

// Require returns the guest's devices. Outside the guest it skips the test
// and says how to run it; inside, a missing device fails the test.
func Require(t testing.TB) Env {
	t.Helper()
	env, err := Lookup()
	if errors.Is(err, ErrOutside) {
		t.Skipf("needs real RDMA devices: run in the test VM with go test -exec %s", runner())
	}
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// Command is exec.CommandContext run inside the device's network namespace,
// so sockets and rdma_cm see that host's addresses.
func (d Device) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	if d.Netns == "" {
		return exec.CommandContext(ctx, name, args...)
	}
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", d.Netns, name}, args...)...)
}

// PortState returns the state of the device's port 1 as sysfs spells it, e.g.
// "4: ACTIVE".
func (d Device) PortState() (string, error) {
	b, err := os.ReadFile(filepath.Join(sysInfiniband, d.Name, "ports", "1", "state"))
	if err != nil {
		return "", fmt.Errorf("vm: device %s: %w", d.Name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Counters returns the device's port 1 hardware counters (hw_counters in
// sysfs: packets, retries, RNR NAKs and the like) by name. A test that
// hangs logs them to say where the device's requests are.
func (d Device) Counters() (map[string]uint64, error) {
	dir := filepath.Join(sysInfiniband, d.Name, "ports", "1", "hw_counters")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("vm: device %s: %w", d.Name, err)
	}
	out := make(map[string]uint64, len(ents))
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("vm: device %s: %w", d.Name, err)
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("vm: device %s: counter %s: %w", d.Name, e.Name(), err)
		}
		out[e.Name()] = v
	}
	return out, nil
}

const sysInfiniband = "/sys/class/infiniband"

func (d Device) check() error {
	state, err := d.PortState()
	if err != nil {
		return err
	}
	if !strings.HasSuffix(state, "ACTIVE") {
		return fmt.Errorf("vm: device %s: port 1 is %q, want ACTIVE", d.Name, state)
	}
	return nil
}

// parse builds the environment from URMA_VM_* variables read by getenv.
func parse(getenv func(string) string) (Env, error) {
	var errs []error
	dev := func(prefix, nameVar string, tr Transport, netnsVar string) Device {
		d := Device{Name: getenv(prefix + nameVar), Netdev: getenv(prefix + "_NETDEV"), Transport: tr}
		if netnsVar != "" {
			d.Netns = getenv(netnsVar)
			if d.Netns == "" {
				errs = append(errs, fmt.Errorf("vm: %s is not set", netnsVar))
			}
		}
		if d.Name == "" {
			errs = append(errs, fmt.Errorf("vm: %s is not set", prefix+nameVar))
		}
		if d.Netdev == "" {
			errs = append(errs, fmt.Errorf("vm: %s_NETDEV is not set", prefix))
		}
		addr, err := netip.ParseAddr(getenv(prefix + "_ADDR"))
		if err != nil || !addr.Is4() {
			errs = append(errs, fmt.Errorf("vm: %s_ADDR=%q is not an IPv4 address", prefix, getenv(prefix+"_ADDR")))
		}
		d.Addr = addr
		return d
	}
	env := Env{
		RXE:   dev("URMA_VM_RXE", "", RoCE, ""),
		SIW:   dev("URMA_VM_SIW", "", IWARP, ""),
		HostA: dev("URMA_VM_NS_A", "_DEV", RoCE, "URMA_VM_NS_A"),
		HostB: dev("URMA_VM_NS_B", "_DEV", RoCE, "URMA_VM_NS_B"),
	}
	return env, errors.Join(errs...)
}

// runner is the path of test/vm/run, for the skip message.
func runner() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "test/vm/run"
	}
	return filepath.Join(filepath.Dir(file), "run")
}
