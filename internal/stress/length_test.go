package stress

import (
	"flag"
	"os"
	"time"
)

// The soak and the peer kills are the longest tests of the module. A plain
// go test runs them briefly, so that go test ./... stays short; CI sets
// URMA_STRESS=long for the full runs (.ci/run and test/vm/ci), and the
// flags override either.
var long = os.Getenv("URMA_STRESS") == "long"

var (
	soakFor   = flag.Duration("soak", pick(30*time.Second, 3*time.Second), "how long TestSoak runs its two processes (URMA_STRESS=long: 30s, else 3s)")
	faultRuns = flag.Int("faults", pick(100, 5), "how many runs TestPeerFaults makes (URMA_STRESS=long: 100, else 5)")
)

// pick returns full when URMA_STRESS=long, else brief.
func pick[T any](full, brief T) T {
	if long {
		return full
	}
	return brief
}
