package vm

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func guestVars() map[string]string {
	return map[string]string{
		"URMA_VM_RXE": "rxe0", "URMA_VM_RXE_NETDEV": "urma-rxe0", "URMA_VM_RXE_ADDR": "169.254.77.1",
		"URMA_VM_SIW": "siw0", "URMA_VM_SIW_NETDEV": "urma-siw0", "URMA_VM_SIW_ADDR": "169.254.78.1",
		"URMA_VM_NS_A": "urma-a", "URMA_VM_NS_A_DEV": "rxe_a", "URMA_VM_NS_A_NETDEV": "urma-va", "URMA_VM_NS_A_ADDR": "169.254.79.1",
		"URMA_VM_NS_B": "urma-b", "URMA_VM_NS_B_DEV": "rxe_b", "URMA_VM_NS_B_NETDEV": "urma-vb", "URMA_VM_NS_B_ADDR": "169.254.79.2",
	}
}

// TestGuestInitMatchesParse keeps vm.go and the guest's init script in step:
// every variable parse reads is exported by guest-init with the value the
// tests here expect.
func TestGuestInitMatchesParse(t *testing.T) {
	script, err := os.ReadFile("guest-init")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range guestVars() {
		if !strings.Contains(string(script), k+"="+v+" ") && !strings.Contains(string(script), k+"="+v+"\n") {
			t.Errorf("guest-init does not export %s=%s", k, v)
		}
	}
}

func TestParse(t *testing.T) {
	env, err := parse(func(k string) string { return guestVars()[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := Env{
		RXE:   Device{Name: "rxe0", Netdev: "urma-rxe0", Addr: netip.MustParseAddr("169.254.77.1"), Transport: RoCE},
		SIW:   Device{Name: "siw0", Netdev: "urma-siw0", Addr: netip.MustParseAddr("169.254.78.1"), Transport: IWARP},
		HostA: Device{Name: "rxe_a", Netdev: "urma-va", Addr: netip.MustParseAddr("169.254.79.1"), Transport: RoCE, Netns: "urma-a"},
		HostB: Device{Name: "rxe_b", Netdev: "urma-vb", Addr: netip.MustParseAddr("169.254.79.2"), Transport: RoCE, Netns: "urma-b"},
	}
	if env != want {
		t.Fatalf("parse =\n%+v\nwant\n%+v", env, want)
	}
}

func TestParseNamesWhatIsWrong(t *testing.T) {
	vars := guestVars()
	delete(vars, "URMA_VM_SIW")
	delete(vars, "URMA_VM_NS_B")
	vars["URMA_VM_RXE_ADDR"] = "fe80::1"
	_, err := parse(func(k string) string { return vars[k] })
	if err == nil {
		t.Fatal("parse accepted an incomplete environment")
	}
	for _, want := range []string{"URMA_VM_SIW is not set", "URMA_VM_NS_B is not set", `URMA_VM_RXE_ADDR="fe80::1" is not an IPv4 address`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestLookupOutside(t *testing.T) {
	t.Setenv("URMA_VM", "")
	if _, err := Lookup(); !errors.Is(err, ErrOutside) {
		t.Fatalf("Lookup outside the VM = %v, want ErrOutside", err)
	}
}

func TestRunnerPathExists(t *testing.T) {
	if _, err := os.Stat(runner()); err != nil {
		t.Fatalf("the skip message names %s: %v", runner(), err)
	}
}

// TestDevices checks, in the guest, that each device is active, that its
// interface has its address in its own namespace, and that a RoCE device's
// GID table holds that address.
func TestDevices(t *testing.T) {
	env := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, d := range env.Devices() {
		out, err := d.Command(ctx, "ip", "-o", "-4", "addr", "show", "dev", d.Netdev).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: ip addr show %s: %v\n%s", d.Name, d.Netdev, err, out)
		}
		if !strings.Contains(string(out), " "+d.Addr.String()+"/") {
			t.Errorf("%s: %s does not have %s:\n%s", d.Name, d.Netdev, d.Addr, out)
		}
		if d.Transport == RoCE && !hasGID(t, d) {
			t.Errorf("%s: no GID for %s", d.Name, d.Addr)
		}
	}
	for _, d := range []Device{env.HostA, env.HostB} {
		if _, err := net.InterfaceByName(d.Netdev); err == nil {
			t.Errorf("%s is visible in the initial namespace; it should live only in %s", d.Netdev, d.Netns)
		}
	}
}

// hasGID reports whether the device's GID table holds its IPv4 address as an
// IPv4-mapped IPv6 GID (RoCE v2).
func hasGID(t *testing.T, d Device) bool {
	gids, err := filepath.Glob(filepath.Join(sysInfiniband, d.Name, "ports", "1", "gids", "*"))
	if err != nil || len(gids) == 0 {
		t.Fatalf("%s: no GID table: %v", d.Name, err)
	}
	for _, g := range gids {
		b, err := os.ReadFile(g)
		if err != nil {
			continue // unused entries cannot be read
		}
		a, err := netip.ParseAddr(strings.TrimSpace(string(b)))
		if err == nil && a.Unmap() == d.Addr {
			return true
		}
	}
	return false
}

// TestTwoHostsCrossTheWire runs an RDMA WRITE bandwidth pair between the two
// namespaces and checks that the packets went through host A's veth.
func TestTwoHostsCrossTheWire(t *testing.T) {
	env := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const iters = 200
	before := txPackets(ctx, t, env.HostA)
	counted, err := env.HostA.Counters()
	if err != nil {
		t.Fatal(err)
	}

	server := env.HostB.Command(ctx, "ib_write_bw", "-d", env.HostB.Name, "-n", strconv.Itoa(iters))
	var serverOut strings.Builder
	server.Stdout, server.Stderr = &serverOut, &serverOut
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	var clientOut []byte
	for range 40 { // the server needs a moment to listen
		clientOut, err = env.HostA.Command(ctx, "ib_write_bw", "-d", env.HostA.Name, "-n", strconv.Itoa(iters), env.HostB.Addr.String()).CombinedOutput()
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		_ = server.Process.Kill()
		_ = server.Wait()
		t.Fatalf("client: %v\n%s\nserver:\n%s", err, clientOut, serverOut.String())
	}
	if err := server.Wait(); err != nil {
		t.Fatalf("server: %v\n%s", err, serverOut.String())
	}
	// ib_write_bw's default message is 64 KiB, more than 60 MTU-sized packets.
	if sent := txPackets(ctx, t, env.HostA) - before; sent < iters {
		t.Fatalf("%s sent %d packets for %d RDMA WRITEs; the traffic did not cross the veth", env.HostA.Netdev, sent, iters)
	}
	after, err := env.HostA.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if sent := after["sent_pkts"] - counted["sent_pkts"]; sent < iters {
		t.Fatalf("%s counted %d sent packets for %d RDMA WRITEs (counters %v)", env.HostA.Name, sent, iters, after)
	}
}

func txPackets(ctx context.Context, t *testing.T, d Device) int {
	t.Helper()
	out, err := d.Command(ctx, "cat", "/sys/class/net/"+d.Netdev+"/statistics/tx_packets").Output()
	if err != nil {
		t.Fatalf("tx_packets of %s: %v", d.Netdev, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNoOutsideNetwork checks that the guest's initial namespace has only
// loopback and the devices' own interfaces: nothing reaches outside.
func TestNoOutsideNetwork(t *testing.T) {
	env := Require(t)
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"lo": true, env.RXE.Netdev: true, env.SIW.Netdev: true}
	for _, i := range ifs {
		if !allowed[i.Name] {
			t.Errorf("unexpected network interface %s in the guest", i.Name)
		}
	}
}
