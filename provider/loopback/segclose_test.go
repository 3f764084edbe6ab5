package loopback_test

import (
	"testing"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// Unregistering a segment while another goroutine is writing into it through
// an import must neither crash nor tear: every write either completes before
// the close or fails with REM_ACCESS_ABORT_ERR, and the memory is unmapped
// only after in-flight copies drain (the race detector and SIGSEGV would
// catch a premature unmap).
func TestSegmentCloseWhileWriting(t *testing.T) {
	p := newPair(t)
	const size = 1 << 16
	done := make(chan urma.CRStatus)
	go func() {
		crs := make([]jetty.CR, 1)
		for {
			if err := p.jfs.Write(p.remote, p.tgt.SGE(0, size), p.src.SGE(0, size), 0, 1); err != nil {
				t.Error(err)
				done <- 0
				return
			}
			for {
				n, err := p.jfcA.Poll(crs)
				if err != nil {
					t.Error(err)
					done <- 0
					return
				}
				if n == 1 {
					break
				}
			}
			if !crs[0].OK() {
				done <- crs[0].Status
				return
			}
		}
	}()
	if err := p.dst.Close(); err != nil {
		t.Fatal(err)
	}
	if st := <-done; st != urma.CRRemAccessAbortErr {
		t.Fatalf("write after close ended with %v, want REM_ACCESS_ABORT_ERR", st)
	}
}

// An import that outlives the owner's context fails cleanly: the owner's
// shared page stays mapped for the importer, so the access is refused
// rather than faulting.
func TestImportOutlivesOwnerContext(t *testing.T) {
	p := newPair(t)
	if err := p.b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.jfs.Write(p.remote, p.tgt.SGE(0, 8), p.src.SGE(0, 8), 0, 1); err != nil {
		t.Fatal(err)
	}
	crs := make([]jetty.CR, 1)
	for {
		n, err := p.jfcA.Poll(crs)
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
	}
	if crs[0].Status != urma.CRRemAccessAbortErr {
		t.Fatalf("write to a closed context's segment: %v, want REM_ACCESS_ABORT_ERR", crs[0])
	}
}
