// Command eventfd-pingpong measures the floor under event-mode latency: two
// processes, each pinned to its own core, wake each other through a pair
// of blocking eventfds, as a JFCE sleeper is woken. It prints the round
// trip's median and 99th percentile in microseconds:
//
//	eventfd-pingpong -n 20000 -cpus 0,1
//	rtt_median_us 12.34 rtt_p99_us 20.5
//
// bench/event-wake runs it next to urmactl perf send_lat -e.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	n := flag.Int("n", 20000, "round trips")
	cpus := flag.String("cpus", "0,1", "cores of the two processes")
	child := flag.Bool("child", false, "run as the echoing process (internal)")
	flag.Parse()
	parts := strings.Split(*cpus, ",")
	if len(parts) != 2 {
		fail(fmt.Errorf("-cpus wants two cores, got %q", *cpus))
	}
	runtime.LockOSThread()
	if *child {
		pin(parts[1])
		echo(3, 4)
		return
	}
	pin(parts[0])
	ping, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		fail(err)
	}
	pong, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		fail(err)
	}
	cmd := exec.Command(os.Args[0], "-child", "-cpus", *cpus)
	cmd.ExtraFiles = []*os.File{os.NewFile(uintptr(ping), "ping"), os.NewFile(uintptr(pong), "pong")}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	samples := make([]time.Duration, *n)
	for i := range samples {
		t0 := time.Now()
		signal(ping, 1)
		wait(pong)
		samples[i] = time.Since(t0)
	}
	signal(ping, 2) // tells the child to stop
	if err := cmd.Wait(); err != nil {
		fail(err)
	}
	slices.Sort(samples)
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	fmt.Printf("rtt_median_us %.2f rtt_p99_us %.2f\n", us(samples[len(samples)/2]), us(samples[len(samples)*99/100]))
}

// echo answers each ping with a pong until it reads the stop value.
func echo(ping, pong int) {
	for wait(ping) == 1 {
		signal(pong, 1)
	}
}

func signal(fd int, v uint64) {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], v)
	if _, err := unix.Write(fd, b[:]); err != nil {
		fail(err)
	}
}

func wait(fd int) uint64 {
	var b [8]byte
	if _, err := unix.Read(fd, b[:]); err != nil {
		fail(err)
	}
	return binary.NativeEndian.Uint64(b[:])
}

func pin(cpu string) {
	c, err := strconv.Atoi(cpu)
	if err != nil {
		fail(fmt.Errorf("core %q: %w", cpu, err))
	}
	var set unix.CPUSet
	set.Set(c)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "eventfd-pingpong:", err)
	os.Exit(1)
}
