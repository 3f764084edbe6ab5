package rdmanl

import (
	"bytes"
	"os"
	"strconv"
)

// procRoot is where processOf reads; a variable for tests.
var procRoot = "/proc"

// processOf returns the PID of the process that thread tid belongs to
// (the Tgid line of /proc/TID/status, which exists for every thread even
// though /proc lists only processes), or 0 when it cannot tell.
func processOf(tid uint32) uint32 {
	if tid == 0 {
		return 0
	}
	b, err := os.ReadFile(procRoot + "/" + strconv.FormatUint(uint64(tid), 10) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(line, []byte("Tgid:")); ok {
			n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 32)
			if err != nil {
				return 0
			}
			return uint32(n)
		}
	}
	return 0
}
