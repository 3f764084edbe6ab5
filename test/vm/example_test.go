package vm_test

import (
	"context"
	"testing"

	"github.com/urma-go/sdk/test/vm"
)

// A test that needs kernel verbs asks for the guest's devices; outside the
// guest it is skipped with the command that runs it.
func ExampleRequire() {
	var t *testing.T // the test's *testing.T
	env := vm.Require(t)
	server := env.HostB.Command(context.Background(), "ib_send_lat", "-d", env.HostB.Name)
	client := env.HostA.Command(context.Background(), "ib_send_lat", "-d", env.HostA.Name, env.HostB.Addr.String())
	_, _ = server, client
}
