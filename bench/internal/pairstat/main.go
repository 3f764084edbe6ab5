// Command pairstat summarizes paired benchmark rounds. Each line of its
// input is one round: our figure and the reference's, measured one right
// after the other ("ours theirs"). It prints the median of each side, the
// median of the per-round ratios ours/theirs, and that ratio's first and
// third quartiles:
//
//	printf '1.0 2.0\n1.1 2.0\n0.9 2.1\n' | pairstat
//	rounds 3 ours 1 theirs 2 ratio 0.5 q1 0.4762 q3 0.525
//
// A ratio from each round's own pair cancels what the machine did to both
// sides of that round (a change of frequency, a noisy neighbour), which a
// ratio of two medians taken over different rounds does not. Lines with a
// side missing, zero or not a number are skipped, so a failed run drops its
// round instead of skewing the figures; with no round left it prints
// "rounds 0" alone and exits 1.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	s, err := summarize(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pairstat:", err)
		os.Exit(2)
	}
	fmt.Println(s)
	if s.Rounds == 0 {
		os.Exit(1)
	}
}

// summary is what pairstat prints.
type summary struct {
	Rounds                  int
	Ours, Theirs            float64
	Ratio, RatioQ1, RatioQ3 float64
}

func (s summary) String() string {
	if s.Rounds == 0 {
		return "rounds 0"
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	return fmt.Sprintf("rounds %d ours %s theirs %s ratio %s q1 %s q3 %s",
		s.Rounds, g(s.Ours), g(s.Theirs), g(s.Ratio), g(s.RatioQ1), g(s.RatioQ3))
}

// summarize reads the rounds from r.
func summarize(r io.Reader) (summary, error) {
	var ours, theirs, ratios []float64
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		o, err1 := strconv.ParseFloat(f[0], 64)
		t, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || !(o > 0) || !(t > 0) {
			continue
		}
		ours, theirs, ratios = append(ours, o), append(theirs, t), append(ratios, o/t)
	}
	if err := sc.Err(); err != nil {
		return summary{}, err
	}
	if len(ratios) == 0 {
		return summary{}, nil
	}
	return summary{Rounds: len(ratios), Ours: quantile(ours, 0.5), Theirs: quantile(theirs, 0.5),
		Ratio: quantile(ratios, 0.5), RatioQ1: quantile(ratios, 0.25), RatioQ3: quantile(ratios, 0.75)}, nil
}

// quantile is the q-quantile of v by linear interpolation between the
// closest ranks (the definition of R's default and numpy's), so that the
// median of an even count is the mean of the middle two. It sorts v.
func quantile(v []float64, q float64) float64 {
	slices.Sort(v)
	pos := q * float64(len(v)-1)
	i := int(pos)
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[i] + (pos-float64(i))*(v[i+1]-v[i])
}
