package stress

import (
	"os"
	"testing"

	"github.com/urma-go/sdk/internal/leakcheck"
	_ "github.com/urma-go/sdk/provider/ib"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/test/vm"
)

func TestMain(m *testing.M) {
	maybeChild()
	vm.WatchTimeout()
	os.Exit(leakcheck.Main(m))
}
