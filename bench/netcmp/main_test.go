package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestMain lets the test binary double as the server process.
func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "server" {
		os.Exit(serverMain())
	}
	os.Exit(m.Run())
}

// TestTableHasEveryRow runs the whole command with tiny rounds and checks
// that the table has the host, every row once, and figures that parse:
// positive sides, a ratio inside its quartiles and extremes, and a met
// column that agrees with the ratio and the target.
func TestTableHasEveryRow(t *testing.T) {
	var out, errs bytes.Buffer
	if err := run([]string{"-rounds", "2", "-n", "20", "-mib", "1"}, &out, &errs); err != nil {
		t.Fatalf("run: %v\n%s", err, errs.String())
	}
	table := out.String()
	if !strings.HasPrefix(table, "Host: ") || !strings.Contains(table, "cores") {
		t.Fatalf("no host line:\n%s", table)
	}
	for _, r := range rows {
		var line string
		for l := range strings.Lines(table) {
			if strings.HasPrefix(l, "| "+r.goal+" |") {
				if line != "" {
					t.Fatalf("row %q twice", r.goal)
				}
				line = l
			}
		}
		if line == "" {
			t.Fatalf("no row %q in:\n%s", r.goal, table)
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 9 {
			t.Fatalf("row %q has %d cells, want 9: %q", r.goal, len(cells), line)
		}
		f := func(s string) float64 {
			t.Helper()
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v > 0) {
				t.Fatalf("row %q: %q is not a positive number", r.goal, s)
			}
			return v
		}
		span := func(s string) (float64, float64) {
			t.Helper()
			a, b, ok := strings.Cut(s, "-")
			if !ok {
				t.Fatalf("row %q: %q is not a span", r.goal, s)
			}
			return f(a), f(b)
		}
		if cells[1] != r.target() || cells[4] != r.unit {
			t.Errorf("row %q: target %q unit %q, want %q %q", r.goal, cells[1], cells[4], r.target(), r.unit)
		}
		f(cells[2])
		f(cells[3])
		ratio := f(cells[5])
		q1, q3 := span(cells[6])
		lo, hi := span(cells[7])
		if !(lo <= q1 && q1 <= ratio && ratio <= q3 && q3 <= hi) {
			t.Errorf("row %q: ratio %g outside its spread %g-%g, %g-%g", r.goal, ratio, q1, q3, lo, hi)
		}
		if want := map[bool]string{true: "yes", false: "no"}[r.met(ratio)]; cells[8] != want {
			t.Errorf("row %q: met %q, want %q for ratio %g", r.goal, cells[8], want, ratio)
		}
	}
}

func TestOnlyPicksRows(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-rounds", "1", "-n", "5", "-only", "echo"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n| 64 B echo"); n != 1 {
		t.Fatalf("-only echo printed %d echo rows:\n%s", n, out.String())
	}
	if strings.Contains(out.String(), "gRPC") {
		t.Fatalf("-only echo printed gRPC rows:\n%s", out.String())
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-only", "nosuchrow"}, {"-rounds", "0"}, {"extra"}, {"-nosuchflag"}} {
		if err := run(args, io.Discard, io.Discard); err != errUsage {
			t.Errorf("run(%q) = %v, want errUsage", args, err)
		}
	}
}

func TestQuantileInterpolates(t *testing.T) {
	v := []float64{4, 1, 3, 2}
	if got := quantile(v, 0.5); got != 2.5 {
		t.Errorf("median of 1..4 = %g, want 2.5", got)
	}
	if got := quantile(v, 0.25); got != 1.75 {
		t.Errorf("Q1 of 1..4 = %g, want 1.75", got)
	}
	if v[0] != 4 {
		t.Errorf("quantile sorted its input: %v", v)
	}
	s := summarize([]float64{1, 2, 4, 8}, []float64{2, 2, 2, 2})
	if s.ratio != 1.5 || s.lowest != 0.5 || s.top != 4 {
		t.Errorf("summary %+v: want ratio 1.5, extremes 0.5 and 4", s)
	}
}
