// Package sysfs reads the counters a verbs device keeps for each port in
// sysfs: /sys/class/infiniband/<dev>/ports/<n>/counters/* (the standard
// port counters) and hw_counters/* (the driver's own). It is pure Go, so
// that it can be tested with a fake tree on any machine.
package sysfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urma-go/sdk/provider"
)

// Root is where the kernel lists its verbs devices.
const Root = "/sys/class/infiniband"

// maxFile bounds what one counter file may hold: a counter is a decimal
// (or 0x hex) number and a newline.
const maxFile = 64

// PortCounters reads the counters of port of device dev under root ("" is
// Root). A counter file that cannot be read or parsed is left out: some
// drivers list counters whose read fails (EINVAL, EOPNOTSUPP) on devices
// without them. A missing device or port is ErrNotFound; a port without
// either directory has no counters, and gives empty maps.
func PortCounters(root, dev string, port int) (provider.PortCounters, error) {
	if root == "" {
		root = Root
	}
	pc := provider.PortCounters{Port: port, Counters: map[string]uint64{}, HWCounters: map[string]uint64{}}
	if dev == "" || strings.ContainsAny(dev, "/\x00") || dev == "." || dev == ".." {
		return pc, provider.Errorf(provider.ErrInvalid, "bad device name %q", dev)
	}
	if port < 1 {
		return pc, provider.Errorf(provider.ErrInvalid, "port %d: ports are numbered from 1", port)
	}
	dir := filepath.Join(root, dev, "ports", strconv.Itoa(port))
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return pc, provider.Errorf(provider.ErrNotFound, "no port %d of device %s under %s", port, dev, root)
		}
		return pc, provider.Errorf(provider.ErrFail, "port %d of %s: %v", port, dev, err)
	}
	if err := readDir(filepath.Join(dir, "counters"), pc.Counters); err != nil {
		return pc, err
	}
	if err := readDir(filepath.Join(dir, "hw_counters"), pc.HWCounters); err != nil {
		return pc, err
	}
	return pc, nil
}

// Ports lists the port numbers of dev under root ("" is Root), in order.
func Ports(root, dev string) ([]int, error) {
	if root == "" {
		root = Root
	}
	if dev == "" || strings.ContainsAny(dev, "/\x00") || dev == "." || dev == ".." {
		return nil, provider.Errorf(provider.ErrInvalid, "bad device name %q", dev)
	}
	ents, err := os.ReadDir(filepath.Join(root, dev, "ports"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, provider.Errorf(provider.ErrNotFound, "no device %s under %s", dev, root)
		}
		return nil, provider.Errorf(provider.ErrFail, "ports of %s: %v", dev, err)
	}
	var ports []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 {
			ports = append(ports, n)
		}
	}
	slices.Sort(ports)
	return ports, nil
}

// readDir reads every counter file of dir into m; a missing dir has none.
func readDir(dir string, m map[string]uint64) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return provider.Errorf(provider.ErrFail, "read %s: %v", dir, err)
	}
	for _, e := range ents {
		// sysfs attributes are regular files; a link or directory (as
		// hw_counters' lifespan is not) is no counter.
		if !e.Type().IsRegular() {
			continue
		}
		if v, ok := readCounter(filepath.Join(dir, e.Name())); ok {
			m[e.Name()] = v
		}
	}
	return nil
}

// readCounter reads one counter file.
func readCounter(path string) (uint64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	buf := make([]byte, maxFile+1)
	n, err := f.Read(buf)
	if err != nil || n > maxFile {
		return 0, false
	}
	return ParseCounter(string(buf[:n]))
}

// ParseCounter parses a counter file's text: a decimal or 0x-prefixed
// hexadecimal number, with surrounding white space.
func ParseCounter(s string) (uint64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	base := 10
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s, base = s[2:], 16
	}
	v, err := strconv.ParseUint(s, base, 64)
	return v, err == nil
}
