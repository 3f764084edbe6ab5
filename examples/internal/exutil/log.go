package exutil

import (
	"fmt"
	"os"
	"time"

	"github.com/urma-go/sdk/provider"
)

// URMA_LOG=1 (or debug) makes the providers log to stderr: what a user
// turns on when a connection fails for reasons the error does not tell.
func init() {
	level := provider.LogInfo
	switch os.Getenv("URMA_LOG") {
	case "":
		return
	case "debug":
		level = provider.LogDebug
	}
	provider.SetLog(func(l provider.LogLevel, msg string) {
		fmt.Fprintf(os.Stderr, "%s urma %v: %s\n", time.Now().Format("15:04:05.000000"), l, msg)
	}, level)
}
