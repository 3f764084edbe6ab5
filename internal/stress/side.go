package stress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Side runs a node against a peer reached through in and out: it says
// hello, connects, runs for d (until ctx ends if d is 0), drains, and
// returns the stats. Lines other than the protocol's are handed to
// onLine (the peer's ledger).
func Side(ctx context.Context, cfg Config, d time.Duration, in io.Reader, out io.Writer, onLine func(string)) (Stats, error) {
	n, err := Open(cfg, out)
	if err != nil {
		return Stats{}, err
	}
	st, err := n.Serve(ctx, d, in, onLine)
	return st, errors.Join(err, n.Close())
}

// Serve is Side on an open node, which stays open: its memory can be
// checked afterwards.
func (n *Node) Serve(ctx context.Context, d time.Duration, in io.Reader, onLine func(string)) (Stats, error) {
	h, err := n.Hello()
	if err != nil {
		return Stats{}, err
	}
	n.line(h)
	lines := bufio.NewScanner(in)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	if !lines.Scan() {
		return Stats{}, fmt.Errorf("stress: peer closed before its hello: %v", lines.Err())
	}
	if err := n.Connect(lines.Text()); err != nil {
		return Stats{}, err
	}
	go func() {
		for lines.Scan() {
			switch l := lines.Text(); {
			case l == "drained":
				n.PeerDone()
			case onLine != nil:
				onLine(l)
			}
		}
		n.PeerDone() // the peer is gone
	}()
	n.running.Store(true)
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return n.Run(ctx)
}

// Ledger collects a peer's post and done lines, to check afterwards that
// the WRITEs it reported complete are intact in this node's memory.
type Ledger struct {
	mu   sync.Mutex
	last map[[2]int]ledgerEntry // (worker, slot) -> its latest line
}

type ledgerEntry struct {
	done bool
	seq  uint64
}

// Add records one line; other lines are ignored.
func (l *Ledger) Add(line string) {
	f := strings.Fields(line)
	if len(f) != 4 || (f[0] != "post" && f[0] != "done") {
		return
	}
	w, err1 := strconv.Atoi(f[1])
	slot, err2 := strconv.Atoi(f[2])
	seq, err3 := strconv.ParseUint(f[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[[2]int]ledgerEntry{}
	}
	l.last[[2]int{w, slot}] = ledgerEntry{done: f[0] == "done", seq: seq}
}

// Check verifies, for every slot whose latest WRITE was reported complete
// (and not followed by another that may have been cut short), that this
// node's memory holds that block. It returns how many blocks it checked
// and how many were wrong.
func (n *Node) Check(l *Ledger) (checked, bad int) {
	scratch := make([]byte, slotSize)
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, e := range l.last {
		w, slot := k[0], k[1]
		if !e.done || w < 0 || w >= len(n.workers) || slot < 0 || slot >= slots {
			continue
		}
		checked++
		if !blockOK(n.workers[w].mem(slotOff(areaOff, slot), slotSize), w, e.seq, scratch) {
			bad++
		}
	}
	return checked, bad
}
