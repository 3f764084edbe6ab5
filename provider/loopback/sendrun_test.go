package loopback_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// A post list of SENDs is delivered in runs (several messages per claim of
// receives and per reservation of records). Whatever the list holds, a
// run must leave exactly what one request at a time leaves: the same
// records on both sides, in the same order, the same bytes in the
// receive buffers and the same post error. Random lists mix inline and
// SGE data, SEND_IMM, solicited and unsignaled requests; messy ones add
// WRITEs, two-SGE and invalid requests that end runs, and receives that are
// too small or split in two. Receives may be missing (RNR), and the
// receive JFC may be too small for a run's records. Inboxes are off: the
// small SENDs of these lists would go there, not in runs.
func TestRunsMatchOneAtATime(t *testing.T) {
	t.Cleanup(func() { loopback.SetRuns(true); loopback.SetInbox(true) })
	loopback.SetInbox(false)
	compareScenarios(t, func(seed uint64) bool { return true }, loopback.SetRuns, "runs")
}

// The same lists through the receive queue's inbox must leave what they
// leave the usual way (inboxes off), but for a receive JFC too small for
// the records: who delivers decides which records it drops (a poll that
// delivers puts them straight into its output, and drops none).
func TestInboxMatchesUsualWay(t *testing.T) {
	t.Cleanup(func() { loopback.SetInbox(true) })
	compareScenarios(t, func(seed uint64) bool { return !smallJFC(seed) }, loopback.SetInbox, "inboxes")
}

// compareScenarios runs the scenarios of the seeds keep accepts with set
// off, then on, and requires the same outcome.
func compareScenarios(t *testing.T, keep func(seed uint64) bool, set func(on bool), what string) {
	for _, where := range []string{"same process", "other process"} {
		t.Run(where, func(t *testing.T) {
			a, b := scenarioContexts(t, where)
			seeds := 60
			if testing.Short() {
				seeds = 15
			}
			quarantined := loopback.Quarantined()
			for seed := uint64(1); seed <= uint64(seeds); seed++ {
				if !keep(seed) {
					continue
				}
				set(false)
				want := runScenario(t, a, b, seed)
				set(true)
				got := runScenario(t, a, b, seed)
				require.Equal(t, want, got, "seed %d: %s on (got) against off (want)", seed, what)
			}
			require.Equal(t, quarantined, loopback.Quarantined(), "a segment stayed pinned after its posts")
		})
	}
}

// smallJFC tells whether the scenario of seed gives its receive queue a JFC
// of 4 records.
func smallJFC(seed uint64) bool { return seed%5 == 0 }

// scenarioContexts opens a sending context and a receiving one, in this
// process or (through a proxy) in a peer process.
func scenarioContexts(t *testing.T, where string) (a, b *urma.Context) {
	if where == "other process" {
		x := newXProc(t)
		return x.a, x.b
	}
	dev, err := urma.DeviceByName(loopback.DeviceName)
	require.NoError(t, err)
	a, err = urma.Open(dev, 0, nil)
	require.NoError(t, err)
	b, err = urma.Open(dev, 1, nil)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// scenarioCR is what a scenario compares of a completion record.
type scenarioCR struct {
	Status  urma.CRStatus
	Opcode  jetty.CROpcode
	Flags   jetty.CRFlags
	UserCtx uint64
	Len     uint32
	Imm     uint64
}

type scenarioOutcome struct {
	PostErr     string
	Sent, Recvd []scenarioCR
	Mem         []byte
}

const (
	recvArea  = 8192 // receive buffers live below, WRITE targets above
	scenarioN = 40   // most requests in a list
)

// runScenario posts the random list of seed and returns what came of it.
func runScenario(t *testing.T, a, b *urma.Context, seed uint64) scenarioOutcome {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5e7d))
	smallJFC := smallJFC(seed)
	// odd(p) is true with probability p/40 in messy scenarios (one in
	// three) and p/400 in the others, whose lists then make long runs.
	odd := func(p int) bool {
		if seed%3 == 0 {
			return rng.IntN(40) < p
		}
		return rng.IntN(400) < p
	}
	jfc, err := jetty.NewJFC(a, jetty.JFCConfig{Depth: 1024})
	require.NoError(t, err)
	jfs, err := jetty.NewJFS(a, jetty.JFSConfig{JFC: jfc, Depth: 256, MaxInline: 64, MaxSGE: 2,
		RNRRetry: 7, RNRTimeout: time.Millisecond})
	require.NoError(t, err)
	rdepth := 1024
	if smallJFC {
		rdepth = 4
	}
	rjfc, err := jetty.NewJFC(b, jetty.JFCConfig{Depth: rdepth, AllowOverrun: smallJFC}) // a small one overflows on purpose
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(b, jetty.JFRConfig{JFC: rjfc, Depth: 16, MaxSGE: 2})
	require.NoError(t, err)
	rem, err := jetty.ImportJFR(t.Context(), a, jfr.Descriptor(), 0)
	require.NoError(t, err)
	src, err := segment.Alloc(a, 4096, segment.Config{Access: segment.LocalOnly})
	require.NoError(t, err)
	for i := range src.Bytes() {
		src.Bytes()[i] = byte(rng.Uint32())
	}
	dst, err := segment.Alloc(b, 2*recvArea, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	tgt, err := segment.Import(t.Context(), a, dst.Descriptor(), 0)
	require.NoError(t, err)
	defer func() {
		for _, c := range []interface{ Close() error }{rem, jfr, tgt, dst, src, jfc, rjfc} {
			require.NoError(t, c.Close())
		}
	}()

	n := 1 + rng.IntN(scenarioN)
	recvs := make([]jetty.RecvWR, 2*n+3)
	for i := range recvs {
		off := uint64(i) * 64
		size := uint32(64)
		if odd(10) {
			size = []uint32{0, 4, 8, 16}[rng.IntN(4)]
		}
		recvs[i] = jetty.RecvWR{UserCtx: 1000 + uint64(i), Local: []segment.SGE{dst.SGE(off, size)}}
		switch {
		case odd(4):
			recvs[i].Local = []segment.SGE{dst.SGE(off, 8), dst.SGE(off+32, 8)}
		case odd(4):
			recvs[i].Local = nil
		}
	}
	// postRecvs posts the next receives, up to k of them or until the JFR
	// is full, and returns how many it posted.
	nextRecv := 0
	postRecvs := func(k int) int {
		done := 0
		for ; done < k && nextRecv < len(recvs); done++ {
			err := jfr.PostRecv(recvs[nextRecv : nextRecv+1])
			if errors.Is(err, urma.ErrAgain) {
				break
			}
			require.NoError(t, err)
			nextRecv++
		}
		return done
	}
	postRecvs(rng.IntN(n + 3))

	sizes := []uint32{0, 1, 7, 8, 16, 40}
	wrs := make([]jetty.WR, n)
	for j := range wrs {
		w := &wrs[j]
		w.To, w.UserCtx, w.Imm = rem, uint64(j+1), seed<<8|uint64(j)
		w.Opcode = urma.Opcode(urma.OpSend)
		switch {
		case rng.IntN(5) == 0:
			w.Opcode = urma.OpSendImm
		case odd(4):
			w.Opcode = urma.OpWrite
			w.Remote = tgt.SGE(recvArea+uint64(j)*64, 0)
		}
		size := sizes[rng.IntN(len(sizes))]
		off := uint64(rng.IntN(64)) * 64
		switch {
		case odd(4):
			w.Local = []segment.SGE{src.SGE(off, size), src.SGE(off+128, 3)}
		case rng.IntN(2) == 0:
			w.Flags |= jetty.Inline
			w.Inline = src.Bytes()[off : off+uint64(size)]
		default:
			w.Local = []segment.SGE{src.SGE(off, size)}
		}
		if w.Opcode == urma.OpWrite {
			w.Remote.Len = uint32(w.DataLen())
		}
		if rng.IntN(2) == 0 {
			w.Flags |= jetty.Signaled
		}
		if rng.IntN(5) == 0 {
			w.Flags |= jetty.Solicited
		}
		if odd(1) {
			w.Flags |= jetty.Inline // too much to inline: the post fails here
			w.Inline, w.Local = src.Bytes()[:100], nil
		}
	}
	var out scenarioOutcome
	posted := len(wrs)
	if err := jfs.Post(wrs); err != nil {
		out.PostErr = err.Error()
		var pe *jetty.PostError
		require.ErrorAs(t, err, &pe)
		posted = pe.Index
	}
	// Receives for everything still waiting, as the JFR takes them (it
	// holds 16, so its ring wraps): in this process the post of a
	// receive runs the waiting requests, from another one the RNR retry
	// does.
	more := 0
	if !smallJFC {
		more = n
	}
	crs := make([]jetty.CR, 64)
	keep := func(dst *[]scenarioCR, got []jetty.CR) {
		for _, c := range got {
			*dst = append(*dst, scenarioCR{c.Status, c.Opcode, c.Flags, c.UserCtx, c.Len, c.Imm})
		}
	}
	for idle := 0; idle < 30; {
		posted := postRecvs(more)
		more -= posted
		k1, err := jfc.Poll(crs)
		require.NoError(t, err)
		keep(&out.Sent, crs[:k1])
		k2, err := rjfc.Poll(crs)
		require.NoError(t, err)
		keep(&out.Recvd, crs[:k2])
		if k1+k2+posted > 0 {
			idle = 0
			continue
		}
		idle++
		time.Sleep(time.Millisecond)
	}
	if a, err := jfs.Query(); err == nil && a.State == urma.StateError {
		k, err := jfs.Flush(crs)
		require.NoError(t, err)
		keep(&out.Sent, crs[:k])
	}
	out.Mem = append([]byte(nil), dst.Bytes()...)
	if !smallJFC {
		checkScenario(t, seed, wrs[:posted], recvs, src, dst, out)
	}
	// Requests still waiting for a receive (a small JFC's scenario) stop
	// retrying here.
	require.NoError(t, jfs.Close())
	return out
}

// checkScenario checks a scenario's outcome against what its requests
// say, not against another run: each SEND fills the next receive posted
// with its data and makes that receive's record, each WRITE lands at its
// remote range, and each signaled request completes, in order. The model
// stops at the first SEND that does not fit its receive (the queue then
// fails, which the comparison of runs covers). src and dst are the source
// and the receiving segment.
func checkScenario(t *testing.T, seed uint64, wrs []jetty.WR, recvs []jetty.RecvWR, src, dst *segment.Segment, out scenarioOutcome) {
	t.Helper()
	data := func(w *jetty.WR) []byte {
		if w.Flags&jetty.Inline != 0 && len(w.Inline) > 0 {
			return w.Inline
		}
		var b []byte
		for _, sg := range w.Local {
			b = append(b, src.Bytes()[sg.Addr-src.VA():][:sg.Len]...)
		}
		return b
	}
	k, signaled := 0, 0
	for j := range wrs {
		w := &wrs[j]
		d := data(w)
		switch w.Opcode {
		case urma.OpSend, urma.OpSendImm:
			r := recvs[k]
			var room uint64
			for _, sg := range r.Local {
				room += uint64(sg.Len)
			}
			if uint64(len(d)) > room {
				return
			}
			require.Less(t, k, len(out.Recvd), "seed %d: request %d's receive record", seed, j)
			got := out.Recvd[k]
			crop, _ := jetty.CROpcodeOf(w.Opcode)
			want := scenarioCR{urma.CRSuccess, crop, got.Flags, r.UserCtx, uint32(len(d)), got.Imm}
			require.Equal(t, want, got, "seed %d: request %d's receive record", seed, j)
			if w.Opcode == urma.OpSendImm {
				require.Equal(t, w.Imm, got.Imm, "seed %d: request %d's immediate", seed, j)
			}
			rest := d
			for _, sg := range r.Local {
				n := min(uint64(len(rest)), uint64(sg.Len))
				off := sg.Addr - dst.VA()
				require.Equal(t, append([]byte{}, rest[:n]...), out.Mem[off:off+n], "seed %d: request %d's data in receive %d", seed, j, k)
				rest = rest[n:]
			}
			k++
		case urma.OpWrite:
			off := w.Remote.Addr - dst.VA()
			require.Equal(t, append([]byte{}, d...), out.Mem[off:off+uint64(len(d))], "seed %d: request %d's WRITE", seed, j)
		}
		if w.Flags&jetty.Signaled != 0 {
			require.Less(t, signaled, len(out.Sent), "seed %d: request %d's record", seed, j)
			cr := out.Sent[signaled]
			require.Equal(t, w.UserCtx, cr.UserCtx, "seed %d: records in order", seed)
			require.Equal(t, urma.CRSuccess, cr.Status, "seed %d: request %d", seed, j)
			signaled++
		}
	}
}

// Senders that race for the receives of one JFR with post lists: a run
// that loses the claim to another sender lets go of what it pinned and
// tries again. Every message arrives once, each sender's in order, and
// nothing stays pinned. With prepared SENDs, posted one at a time, the
// race is for the short way (sendPrepared), which also reads a receive
// before it claims it.
func TestRunsContend(t *testing.T) {
	for _, where := range []string{"same process", "other process"} {
		for _, prepared := range []bool{false, true} {
			name := where
			if prepared {
				name += "/prepared"
			}
			t.Run(name, func(t *testing.T) { runsContend(t, where, prepared) })
		}
	}
}

func runsContend(t *testing.T, where string, prepared bool) {
	a, b := scenarioContexts(t, where)
	const senders, perSender, list, bufs = 4, 3000, 8, 64
	rjfc, err := jetty.NewJFC(b, jetty.JFCConfig{Depth: 4 * bufs})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(b, jetty.JFRConfig{JFC: rjfc, Depth: bufs})
	require.NoError(t, err)
	dst, err := segment.Alloc(b, bufs*8, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	for i := range bufs {
		require.NoError(t, jfr.Recv(dst.SGE(uint64(i)*8, 8), uint64(i)))
	}
	type side struct {
		jfs *jetty.JFS
		jfc *jetty.JFC
		rem *jetty.Remote
		src *segment.Segment
	}
	sides := make([]side, senders)
	for i := range sides {
		s := &sides[i]
		s.jfc, err = jetty.NewJFC(a, jetty.JFCConfig{Depth: 1024})
		require.NoError(t, err)
		s.jfs, err = jetty.NewJFS(a, jetty.JFSConfig{JFC: s.jfc, Depth: 256, RNRRetry: 7, RNRTimeout: time.Millisecond})
		require.NoError(t, err)
		s.rem, err = jetty.ImportJFR(t.Context(), a, jfr.Descriptor(), 0)
		require.NoError(t, err)
		s.src, err = segment.Alloc(a, list*8, segment.Config{Access: segment.LocalOnly})
		require.NoError(t, err)
	}
	// A failure stops the others before the test ends: a sender still
	// writing its source after the test closed it would crash the run.
	errs := make(chan error, senders+1)
	var stop atomic.Bool
	for i := range sides {
		go func() {
			s := &sides[i]
			wrs := make([]jetty.WR, list)
			crs := make([]jetty.CR, 16)
			var prs []*jetty.Prepared
			if prepared {
				for j := range list {
					w := jetty.WR{Opcode: urma.OpSend, To: s.rem, Local: []segment.SGE{s.src.SGE(uint64(j)*8, 8)}}
					if j == list-1 {
						w.Flags = jetty.Signaled
					}
					p, err := s.jfs.Prepare(w)
					if err != nil {
						errs <- err
						return
					}
					prs = append(prs, p)
				}
			}
			for k := 0; k < perSender && !stop.Load(); k += list {
				for j := range wrs {
					binary.NativeEndian.PutUint64(s.src.Bytes()[j*8:], uint64(i)<<32|uint64(k+j))
					wrs[j] = jetty.WR{Opcode: urma.OpSend, To: s.rem, Local: []segment.SGE{s.src.SGE(uint64(j)*8, 8)}}
				}
				wrs[list-1].Flags = jetty.Signaled
				var err error
				if prepared {
					for _, p := range prs {
						if err = p.Post(); err != nil {
							break
						}
					}
				} else {
					err = s.jfs.Post(wrs)
				}
				if err != nil {
					errs <- err
					return
				}
				// The source is rewritten for the next list: wait until
				// this one is out. Four senders spinning would leave the
				// receiver (the peer process, over its proxy) little CPU
				// on a small machine: they nap instead.
				for n := 0; n == 0 && !stop.Load(); {
					var err error
					if n, err = s.jfc.Poll(crs); err != nil || (n > 0 && !crs[0].OK()) {
						errs <- fmt.Errorf("sender %d: %v %v", i, err, crs[0])
						return
					}
					if n == 0 {
						time.Sleep(20 * time.Microsecond)
					}
				}
			}
			errs <- nil
		}()
	}
	go func() {
		next := make([]uint64, senders)
		crs := make([]jetty.CR, 16)
		deadline := time.Now().Add(60 * time.Second)
		for got := 0; got < senders*perSender && !stop.Load(); {
			n, err := rjfc.Poll(crs)
			if err != nil {
				errs <- err
				return
			}
			for _, cr := range crs[:n] {
				v := binary.NativeEndian.Uint64(dst.Bytes()[cr.UserCtx*8:])
				from, seq := v>>32, v&0xffffffff
				if !cr.OK() || from >= senders || seq != next[from] {
					errs <- fmt.Errorf("receive %v carries sender %d message %d, want message %d", cr, from, seq, next[min(from, senders-1)])
					return
				}
				next[from]++
				got++
				if err := jfr.Recv(dst.SGE(cr.UserCtx*8, 8), cr.UserCtx); err != nil {
					errs <- err
					return
				}
			}
			if n == 0 && time.Now().After(deadline) {
				errs <- fmt.Errorf("%d of %d messages after a minute", got, senders*perSender)
				return
			}
		}
		errs <- nil
	}()
	var failed []error
	for range senders + 1 {
		if err := <-errs; err != nil {
			stop.Store(true)
			failed = append(failed, err)
		}
	}
	require.NoError(t, errors.Join(failed...))
	for _, s := range sides {
		require.NoError(t, errors.Join(s.rem.Close(), s.jfs.Close(), s.src.Close(), s.jfc.Close()))
	}
	require.NoError(t, errors.Join(jfr.Close(), dst.Close(), rjfc.Close()))
}

// crOpOf is the receive-side opcode of a message sent with op.
func crOpOf(op urma.Opcode) jetty.CROpcode {
	crop, ok := jetty.CROpcodeOf(op)
	if !ok {
		panic(fmt.Sprintf("%v consumes no receive", op))
	}
	return crop
}
