package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// kv is one line of a "key: value" listing.
type kv struct {
	k string
	v any
}

// formatKV writes v as JSON, or lines as an aligned "key: value" list for
// table and wide.
func formatKV(w io.Writer, v any, output string, lines []kv) error {
	output = orTable(output)
	if err := checkOutput(output); err != nil {
		return err
	}
	if output == OutputJSON {
		return writeJSON(w, v)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
	for _, l := range lines {
		fmt.Fprintf(tw, "%s:\t%s\n", l.k, safe(fmt.Sprint(l.v)))
	}
	return tw.Flush()
}
