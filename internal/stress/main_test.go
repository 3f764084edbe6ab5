package stress

import (
	"os"
	"testing"

	"github.com/urma-go/sdk/internal/leakcheck"
	_ "github.com/urma-go/sdk/provider/ib"
	_ "github.com/urma-go/sdk/provider/loopback"
)

func TestMain(m *testing.M) {
	maybeChild()
	os.Exit(leakcheck.Main(m))
}
