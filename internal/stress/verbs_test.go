package stress

import (
	"testing"

	"github.com/urma-go/sdk/test/vm"
)

// TestSoakVerbs is TestSoak on the guest's Soft-RoCE device through the ib
// provider, for a tenth of -soak.
func TestSoakVerbs(t *testing.T) {
	env := vm.Require(t)
	soak(t, Config{Device: env.RXE.Name, Workers: 4}, *soakFor/10)
}

// TestPeerFaultsVerbs is TestPeerFaults on Soft-RoCE, with a tenth of the
// runs: a dead peer's requests end by transport timeouts there, seconds
// rather than the loopback's milliseconds.
func TestPeerFaultsVerbs(t *testing.T) {
	env := vm.Require(t)
	dir := t.TempDir() // nothing of the ib provider's lives in files
	runs := max(*faultRuns/10, 1)
	outcomes := map[string]int{}
	for i := range runs {
		res := faultRun(t, i, dir, env.RXE.Name)
		if t.Failed() {
			return
		}
		outcomes[res.outcome]++
	}
	t.Logf("%d runs on %s: %s", runs, env.RXE.Name, summary(outcomes))
}
