package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// host describes the machine: CPU model, cores, kernel, clocksource and
// Go version.
func host() string {
	model := "unknown CPU"
	var family, num string
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() && sc.Text() != "" { // the first processor's lines
			k, v, ok := strings.Cut(sc.Text(), ":")
			switch k, v = strings.TrimSpace(k), strings.TrimSpace(v); {
			case !ok:
			case k == "model name":
				model = v
			case k == "cpu family":
				family = v
			case k == "model":
				num = v
			}
		}
		f.Close()
	}
	if family != "" {
		model += fmt.Sprintf(" (family %s, model %s)", family, num)
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			return "unknown"
		}
		return strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%s, %d cores, Linux %s, clocksource %s, %s", model, runtime.NumCPU(),
		read("/proc/sys/kernel/osrelease"),
		read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
		runtime.Version())
}
