package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is urmactl's --version: its module version (a release's tag
// when built with go install of a version, "(devel)" in a checkout), the
// revision it was built from when the build knew it, and the Go release
// and platform it was built for.
func version() string {
	v, rev, modified := "(devel)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += ", modified"
		}
		v += " (" + rev + ")"
	}
	return fmt.Sprintf("%s, %s %s/%s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
