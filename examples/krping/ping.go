package main

import (
	"context"
	"fmt"
	"io"
)

// pingClient runs krping's ping loop on the client: advertise the source,
// wait for "go ahead", advertise the sink, wait for "go ahead", validate.
func pingClient(ctx context.Context, w io.Writer, p *peer, o options) error {
	start := byte('A')
	for ping := 0; o.count == 0 || ping < o.count; ping++ {
		src := p.start.Bytes()
		start = fillPing(src, ping, start)
		if err := p.advertise(p.start); err != nil {
			return err
		}
		if err := p.goAhead(ctx); err != nil {
			return fmt.Errorf("waiting for go ahead after the source advertisement: %w", err)
		}
		if err := p.advertise(p.rdma); err != nil {
			return err
		}
		if err := p.goAhead(ctx); err != nil {
			return fmt.Errorf("waiting for go ahead after the sink advertisement: %w", err)
		}
		if o.validate {
			if err := validate(src, p.rdma.Bytes()); err != nil {
				return fmt.Errorf("ping %d: %w", ping, err)
			}
		}
		if o.verbose {
			fmt.Fprintf(w, "ping data: %s\n", p.rdma.Bytes()[:cstrlen(p.rdma.Bytes())])
		}
	}
	return nil
}

// tamper, when set (by tests), changes the data a server read before it
// writes it back, so that validate has something to catch.
var tamper func(ping int, data []byte)

// pingServer answers pings: READ the advertised source into the rdma
// buffer, "go ahead", WRITE it back to the advertised sink, "go ahead". It
// returns when count pings are done, or with the context's error when the
// client hangs up.
func pingServer(ctx context.Context, w io.Writer, p *peer, o options) error {
	buf := p.rdma.Bytes()
	for ping := 0; o.count == 0 || ping < o.count; ping++ {
		src, err := p.recvAd(ctx)
		if err != nil {
			return err
		}
		if int(src.size) > len(buf) {
			return fmt.Errorf("client advertises %d bytes, this server's buffer holds %d (size=%d on both sides)", src.size, len(buf), len(buf))
		}
		t, err := p.target(src)
		if err != nil {
			return err
		}
		if err := p.jetty.Read(nil, t.SGE(0, src.size), p.rdma.SGE(0, src.size), 0, readCtx); err != nil {
			return err
		}
		if _, err := p.await(ctx, false, readCtx); err != nil {
			return fmt.Errorf("rdma read: %w", err)
		}
		p.stats.readMsgs++
		p.stats.readBytes += uint64(src.size)
		if tamper != nil {
			tamper(ping, buf[:src.size])
		}
		if o.verbose {
			fmt.Fprintf(w, "server ping data (64B max): |%.64s|\n", buf[:cstrlen(buf[:src.size])])
		}
		if err := p.sendAd(ad{}); err != nil {
			return err
		}
		sink, err := p.recvAdAfterSend(ctx)
		if err != nil {
			return err
		}
		// krping writes the string back: strlen + 1, within both buffers.
		n := uint32(min(cstrlen(buf[:src.size])+1, int(src.size), int(sink.size)))
		t, err = p.target(sink)
		if err != nil {
			return err
		}
		if err := p.jetty.Write(nil, t.SGE(0, n), p.rdma.SGE(0, n), 0, writeCtx); err != nil {
			return err
		}
		if _, err := p.await(ctx, false, writeCtx); err != nil {
			return fmt.Errorf("rdma write: %w", err)
		}
		p.stats.writeMsgs++
		p.stats.writeBytes += uint64(n)
		if err := p.sendAd(ad{}); err != nil {
			return err
		}
		if _, err := p.await(ctx, false, sendCtx); err != nil {
			return err
		}
	}
	return nil
}

// goAhead waits for the server's "go ahead" (16 bytes, like an
// advertisement) and the completion of the SEND before it.
func (p *peer) goAhead(ctx context.Context) error {
	b, err := p.await(ctx, true, sendCtx)
	if err != nil {
		return err
	}
	_, err = parseAd(b)
	return err
}

// recvAd waits for the next advertisement.
func (p *peer) recvAd(ctx context.Context) (ad, error) {
	b, err := p.await(ctx, true)
	if err != nil {
		return ad{}, err
	}
	return parseAd(b)
}

// recvAdAfterSend waits for the next advertisement and the completion of
// the SEND posted before it, in either order.
func (p *peer) recvAdAfterSend(ctx context.Context) (ad, error) {
	b, err := p.await(ctx, true, sendCtx)
	if err != nil {
		return ad{}, err
	}
	return parseAd(b)
}
