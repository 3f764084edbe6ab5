package perf

import "testing"

// TestSignalerMatchesModulo holds the countdown to the rule it replaces:
// request n of limit is signaled when n%cqMod == 0 or n == limit, and a
// duration-bound loop may stop only after such a request.
func TestSignalerMatchesModulo(t *testing.T) {
	for _, cqMod := range []int{1, 2, 7, 100} {
		for _, limit := range []int{1, 5, 100, 1001} {
			s := newSignaler(cqMod)
			for n := 1; n <= limit; n++ {
				if got, want := s.atSignal(), (n-1)%cqMod == 0; got != want {
					t.Fatalf("cqMod %d: atSignal before request %d = %v, want %v", cqMod, n, got, want)
				}
				if got, want := s.next(n, limit), n%cqMod == 0 || n == limit; got != want {
					t.Fatalf("cqMod %d limit %d: request %d signaled %v, want %v", cqMod, limit, n, got, want)
				}
			}
		}
	}
}
