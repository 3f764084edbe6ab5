package perf

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// errStopped ends a server loop: the client said it is done.
var errStopped = errors.New("stopped")

// eventSlice bounds one sleep on the JFCE, so that a stop is noticed.
const eventSlice = 100 * time.Millisecond

// spinYield is how many empty polls pass between yields: with
// GODEBUG=asyncpreemptoff=1 nothing else stops a spinning goroutine, and a
// collection's stop-the-world would wait for it.
const spinYield = 4096

// poll returns the number of records in e.crs, waiting for at least one:
// spinning, or in event mode sleeping on the JFCE once the JFC is empty.
// It gives up with errStopped when stop is set. A failed record is an
// error.
func (e *endpoint) poll(stop *atomic.Bool) (int, error) {
	for spins := 1; ; spins++ {
		n, err := e.jfc.Poll(e.crs)
		if err != nil {
			return 0, err
		}
		if n > 0 {
			for i := range e.crs[:n] {
				if cr := &e.crs[i]; !cr.OK() {
					return 0, fmt.Errorf("completion of %v: %w", cr.Opcode, cr.Err())
				}
			}
			return n, nil
		}
		if spins%spinYield == 0 {
			if stop != nil && stop.Load() {
				return 0, errStopped
			}
			runtime.Gosched()
		}
		if !e.cfg.Event {
			continue
		}
		// Rearm refuses while records are unread: the race between the
		// poll above and going to sleep.
		if err := e.jfc.Rearm(false); errors.Is(err, urma.ErrAgain) {
			continue
		} else if err != nil {
			return 0, err
		}
		if err := e.jfc.Wait(eventSlice); err != nil && !errors.Is(err, urma.ErrTimeout) {
			return 0, err
		}
		if stop != nil && stop.Load() {
			return 0, errStopped
		}
	}
}

// byteWatch reads the last byte of a region that the peer WRITEs behind
// Go's back, with an atomic load of the aligned word holding it so the
// compiler keeps the load in the loop.
type byteWatch struct {
	word  *uint32
	shift uint
}

func watchLast(b []byte) byteWatch {
	last := uintptr(unsafe.Pointer(&b[len(b)-1]))
	base := last &^ 3
	return byteWatch{word: (*uint32)(unsafe.Pointer(&b[len(b)-1-int(last-base)])), shift: uint(last-base) * 8}
}

func (w byteWatch) load() byte { return byte(atomic.LoadUint32(w.word) >> w.shift) }

// await spins until the watched byte is v, or stop is set.
func (w byteWatch) await(v byte, stop *atomic.Bool) error {
	for spins := 1; w.load() != v; spins++ {
		if spins%spinYield == 0 {
			if stop != nil && stop.Load() {
				return errStopped
			}
			runtime.Gosched()
		}
	}
	return nil
}

// marker is the byte that tells iteration i's data has arrived: never 0
// (the regions start zeroed) and never the previous one.
func marker(i int) byte { return byte(i%255) + 1 }

// recvCRs splits the records in e.crs[:n] into receives and send-side
// records.
func recvCRs(crs []jetty.CR) (recv, send int) {
	for i := range crs {
		if crs[i].Flags&jetty.CRRecv != 0 {
			recv++
		} else {
			send++
		}
	}
	return recv, send
}
