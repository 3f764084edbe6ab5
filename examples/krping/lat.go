package main

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urma-go/sdk/spin"
)

// The wlat, rlat and bw tests start with both ends advertising their start
// buffer: the client first, then the server.
func exchangeAds(ctx context.Context, p *peer, client bool) (ad, error) {
	if client {
		if err := p.advertise(p.start); err != nil {
			return ad{}, err
		}
		return p.recvAdAfterSend(ctx)
	}
	a, err := p.recvAd(ctx)
	if err != nil {
		return ad{}, err
	}
	if err := p.advertise(p.start); err != nil {
		return ad{}, err
	}
	_, err = p.await(ctx, false, sendCtx)
	return a, err
}

// printDelta is the latency tests' line.
func printDelta(w io.Writer, d time.Duration, iters, size int) {
	fmt.Fprintf(w, "delta nsec %d iter %d size %d\n", d.Nanoseconds(), iters, size)
}

// rlat READs the peer's buffer count times, one at a time.
func rlat(ctx context.Context, w io.Writer, p *peer, o options, remote ad) error {
	t, err := p.target(remote)
	if err != nil {
		return err
	}
	n := uint32(min(o.size, int(remote.size)))
	begin := time.Now()
	for i := 0; i < o.count; i++ {
		if err := p.jetty.Read(nil, t.SGE(0, n), p.rdma.SGE(0, n), 0, readCtx); err != nil {
			return err
		}
		if _, err := p.await(ctx, false, readCtx); err != nil {
			return err
		}
		p.stats.readMsgs++
		p.stats.readBytes += uint64(n)
	}
	printDelta(w, time.Since(begin), o.count, int(n))
	return nil
}

// firstByte reads b[0] as a load the compiler keeps in the loop: the peer's
// WRITE changes it behind Go's back.
func firstByte(b []byte) byte {
	return byte(atomic.LoadUint32((*uint32)(unsafe.Pointer(&b[0]))))
}

// wlat ping-pongs WRITEs: each end writes its iteration number into the
// first byte of the other's start buffer and spins on its own until the
// other's arrives. The server waits before its first write.
func wlat(ctx context.Context, w io.Writer, p *peer, o options, remote ad, server bool) error {
	t, err := p.target(remote)
	if err != nil {
		return err
	}
	if o.size < 4 {
		return fmt.Errorf("wlat needs size=4 or more")
	}
	n := uint32(min(o.size, int(remote.size)))
	poll, buf := p.start.Bytes(), p.rdma.Bytes()
	var pace spin.Pacer
	begin := time.Now()
	for i := 1; i <= o.count; i++ {
		// The server answers the client's i; the client, after its first
		// write, waits for the server's i-1.
		want := i
		if !server {
			want = i - 1
		}
		if want > 0 {
			var wait spin.Wait // gives the core away in a long wait
			for firstByte(poll) != byte(want) {
				wait.Idle()
				if pace.Tick() && ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
		buf[0] = byte(i)
		if err := p.jetty.Write(nil, t.SGE(0, n), p.rdma.SGE(0, n), 0, writeCtx); err != nil {
			return err
		}
		if _, err := p.await(ctx, false, writeCtx); err != nil {
			return err
		}
		p.stats.writeMsgs++
		p.stats.writeBytes += uint64(n)
	}
	if !server {
		// The server's last write.
		var wait spin.Wait
		for firstByte(poll) != byte(o.count) {
			wait.Idle()
			if pace.Tick() && ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	printDelta(w, time.Since(begin), o.count, int(n))
	return nil
}

// bw streams count WRITEs into the peer's buffer, txdepth at a time.
func bw(ctx context.Context, w io.Writer, p *peer, o options, remote ad) error {
	t, err := p.target(remote)
	if err != nil {
		return err
	}
	n := uint32(min(o.size, int(remote.size)))
	begin := time.Now()
	posted, done := 0, 0
	for done < o.count {
		for posted < o.count && posted-done < o.txdepth {
			if err := p.jetty.Write(nil, t.SGE(0, n), p.rdma.SGE(0, n), 0, writeCtx); err != nil {
				return err
			}
			posted++
		}
		if _, err := p.await(ctx, false, writeCtx); err != nil {
			return err
		}
		done++
		p.stats.writeMsgs++
		p.stats.writeBytes += uint64(n)
	}
	d := time.Since(begin)
	printDelta(w, d, o.count, int(n))
	fmt.Fprintf(w, "bw %.2f MB/s\n", float64(o.count)*float64(n)/d.Seconds()/1e6)
	return nil
}
