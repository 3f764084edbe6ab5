package spin_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/urma-go/sdk/spin"
)

// A loop that waits for a peer to change a word in memory, as a HERD
// server waits on its request slots: it spins, yields to the scheduler by
// the clock, and looks at its context only when it yields.
func ExamplePacer() {
	var word atomic.Uint32 // stands for a word of a segment the peer WRITEs
	go func() {
		time.Sleep(10 * time.Millisecond)
		word.Store(42)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var p spin.Pacer
	for word.Load() == 0 {
		if p.Tick() && ctx.Err() != nil {
			fmt.Println("gave up:", ctx.Err())
			return
		}
	}
	fmt.Println("peer wrote", word.Load())
	// Output: peer wrote 42
}

func ExampleWait() {
	var word atomic.Uint32 // stands for a word the peer process WRITEs
	go func() {
		time.Sleep(time.Millisecond)
		word.Store(7)
	}()

	var p spin.Pacer
	var w spin.Wait // one per wait: a long one gives the core away now and then
	for word.Load() == 0 {
		w.Idle()
		p.Tick()
	}
	fmt.Println("peer wrote", word.Load())
	// Output: peer wrote 7
}
