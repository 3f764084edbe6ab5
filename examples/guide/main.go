// Command guide runs every step of docs/guide.md in order on the loopback
// device: two contexts of one process, on EIDs 0 and 1, play the owner of
// some memory and a peer that reaches it. It prints a line per step and
// exits with status 1 if a step fails or its result is wrong.
//
// Each region between a "guide:begin" and a "guide:end" comment is a
// snippet of the guide, word for word (main_test.go checks both ways); the
// code around the regions checks what the snippets did.
//
//	go run ./examples/guide
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// guide:begin imports
import (
	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/loopback" // registers the loopback0 device
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// guide:end imports

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "guide:", err)
		os.Exit(1)
	}
}

// guide:begin complete
// complete polls jfc until crs is full, then returns the first failed record's error.
func complete(jfc *jetty.JFC, crs []jetty.CR) error {
	deadline := time.Now().Add(5 * time.Second)
	for got := 0; got < len(crs); {
		n, err := jfc.Poll(crs[got:])
		if err != nil {
			return err
		}
		got += n
		if n == 0 && time.Now().After(deadline) {
			return fmt.Errorf("%d of %d records after 5s", got, len(crs))
		}
	}
	for i := range crs {
		if err := crs[i].Err(); err != nil {
			return err
		}
	}
	return nil
}

// guide:end complete

// run runs the guide's steps in order and prints a line per step to w.
// The deferred Closes of the two contexts free everything on an early
// return; the last step closes each object in order and checks the errors.
func run(w io.Writer) error {
	// guide:begin open
	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		return err
	}
	owner, err := urma.Open(dev, 0, nil) // EID 0: owns the memory
	if err != nil {
		return err
	}
	defer owner.Close()
	peer, err := urma.Open(dev, 1, nil) // EID 1: reaches it
	if err != nil {
		return err
	}
	defer peer.Close()
	// guide:end open
	fmt.Fprintf(w, "open: %v, owner %v, peer %v\n", dev, owner.EID(), peer.EID())

	// guide:begin segments
	const segToken = 0xc0ffee // the secret a peer presents to import mem
	mem, err := segment.Alloc(owner, 4096, segment.Config{Access: segment.Read | segment.Write | segment.Atomic,
		TokenPolicy: segment.TokenPlainText, Token: segToken})
	if err != nil {
		return err
	}
	buf := make([]byte, 4096)
	local, err := segment.Register(peer, buf, segment.Config{Access: segment.LocalOnly})
	if err != nil {
		return err
	}
	// guide:end segments
	fmt.Fprintf(w, "segments: owner %d bytes %v, peer %d bytes %v\n",
		mem.Len(), mem.Descriptor().Access, local.Len(), local.Descriptor().Access)

	// guide:begin owner-queues
	const depth, jfrToken = 64, 0x5eed
	jfce, err := jetty.NewJFCE(owner) // for event mode, below
	if err != nil {
		return err
	}
	ownerJFC, err := jetty.NewJFC(owner, jetty.JFCConfig{Depth: depth, JFCE: jfce}) // only the JFR completes into it
	if err != nil {
		return err
	}
	ownerJFR, err := jetty.NewJFR(owner, jetty.JFRConfig{Depth: depth, JFC: ownerJFC,
		TokenPolicy: segment.TokenPlainText, Token: jfrToken})
	if err != nil {
		return err
	}
	// guide:end owner-queues

	// guide:begin peer-queues
	peerJFC, err := jetty.NewJFC(peer, jetty.JFCConfig{Depth: depth}) // only the JFS completes into it
	if err != nil {
		return err
	}
	peerJFS, err := jetty.NewJFS(peer, jetty.JFSConfig{Depth: depth, Mode: urma.RM, JFC: peerJFC})
	if err != nil {
		return err
	}
	// guide:end peer-queues
	jfrAttr, err := ownerJFR.Query()
	if err != nil {
		return err
	}
	jfsAttr, err := peerJFS.Query()
	if err != nil {
		return err
	}
	if jfrAttr.State != urma.JFRStateReady || jfsAttr.State != urma.StateReady || jfsAttr.Mode != urma.RM {
		return fmt.Errorf("queues: JFR %+v, JFS %+v", jfrAttr, jfsAttr)
	}
	fmt.Fprintf(w, "queues: owner JFC %d <- JFR %d, peer JFC %d <- JFS %d %v\n",
		ownerJFC.Depth(), jfrAttr.Depth, peerJFC.Depth(), jfsAttr.Depth, jfsAttr.Mode)

	// guide:begin descriptors
	segWire, err := mem.Descriptor().MarshalBinary() // segment.DescriptorSize bytes
	if err != nil {
		return err
	}
	jfrWire, err := ownerJFR.Descriptor().MarshalBinary() // jetty.DescriptorSize bytes
	if err != nil {
		return err
	}
	// Out of band (TCP, a file, ...): segWire, jfrWire, segToken and jfrToken.
	// guide:end descriptors
	fmt.Fprintf(w, "descriptors: segment %d bytes, jfr %d bytes\n", len(segWire), len(jfrWire))

	// guide:begin import
	ictx, icancel := context.WithTimeout(context.Background(), 10*time.Second) // imports may ask the owner
	defer icancel()
	var segDesc segment.Descriptor
	if err := segDesc.UnmarshalBinary(segWire); err != nil {
		return err
	}
	target, err := segment.Import(ictx, peer, segDesc, segToken)
	if err != nil {
		return err
	}
	var jfrDesc jetty.Descriptor
	if err := jfrDesc.UnmarshalBinary(jfrWire); err != nil {
		return err
	}
	remote, err := jetty.ImportJFR(ictx, peer, jfrDesc, jfrToken)
	if err != nil {
		return err
	}
	if err := peerJFS.Advise(ictx, remote); err != nil { // required on IB in RM mode, harmless elsewhere
		return err
	}
	// guide:end import
	if target.Len() != mem.Len() || remote.Descriptor().ID != ownerJFR.Descriptor().ID {
		return fmt.Errorf("import: target of %d bytes, remote %v; want %d bytes, %v",
			target.Len(), remote.Descriptor(), mem.Len(), ownerJFR.Descriptor())
	}
	fmt.Fprintf(w, "import: segment of %d bytes, jfr %d\n", target.Len(), remote.Descriptor().ID.ID)

	// guide:begin write-read
	crs := make([]jetty.CR, 8) // every poll below reuses it
	n := uint32(copy(buf, "hello, owner"))
	if err := peerJFS.Write(remote, target.SGE(0, n), local.SGE(0, n), 0, 1); err != nil {
		return err
	}
	if err := peerJFS.Read(remote, target.SGE(0, n), local.SGE(64, n), 0, 2); err != nil {
		return err
	}
	if err := complete(peerJFC, crs[:2]); err != nil { // the WRITE's record, then the READ's
		return err
	}
	// guide:end write-read
	if crs[0].WROpcode != urma.OpWrite || crs[0].UserCtx != 1 || crs[0].Len != n {
		return fmt.Errorf("write: record %v", crs[0])
	}
	if got := mem.Bytes()[:n]; !bytes.Equal(got, buf[:n]) {
		return fmt.Errorf("write: the owner's segment holds %q", got)
	}
	fmt.Fprintf(w, "write: %q in the owner's segment\n", mem.Bytes()[:n])
	if got := buf[64 : 64+n]; !bytes.Equal(got, buf[:n]) || crs[1].WROpcode != urma.OpRead || crs[1].UserCtx != 2 {
		return fmt.Errorf("read: %q, record %v", got, crs[1])
	}
	fmt.Fprintf(w, "read: %q back from the owner's segment\n", buf[64:64+n])

	// guide:begin send
	if err := ownerJFR.Recv(mem.SGE(1024, 64), 10); err != nil { // the owner, first
		return err
	}
	copy(buf[128:], "ping!")
	if err := peerJFS.Send(remote, local.SGE(128, 5), 0, 3); err != nil {
		return err
	}
	if err := complete(peerJFC, crs[:1]); err != nil { // the peer's send record
		return err
	}
	if err := complete(ownerJFC, crs[:1]); err != nil { // the owner's receive record
		return err
	}
	msg := mem.Bytes()[1024:][:crs[0].Len] // "ping!"; crs[0].UserCtx is 10
	// guide:end send
	if string(msg) != "ping!" || crs[0].UserCtx != 10 || crs[0].Flags&jetty.CRRecv == 0 || crs[0].Opcode != jetty.CRSend {
		return fmt.Errorf("send: received %q, record %v", msg, crs[0])
	}
	fmt.Fprintf(w, "send: %q received, receive %d\n", msg, crs[0].UserCtx)

	// guide:begin fadd
	binary.NativeEndian.PutUint64(mem.Bytes()[512:], 40) // the owner's counter
	if err := peerJFS.FetchAdd(remote, target.SGE(512, 8), local.SGE(256, 8), 2, 0, 4); err != nil {
		return err
	}
	if err := complete(peerJFC, crs[:1]); err != nil {
		return err
	}
	old := binary.NativeEndian.Uint64(buf[256:]) // 40; the counter is now 42
	// guide:end fadd
	if now := binary.NativeEndian.Uint64(mem.Bytes()[512:]); old != 40 || now != 42 || crs[0].WROpcode != urma.OpFAdd {
		return fmt.Errorf("fadd: old value %d, counter %d, record %v", old, now, crs[0])
	}
	fmt.Fprintf(w, "fadd: old value %d, counter now %d\n", old, binary.NativeEndian.Uint64(mem.Bytes()[512:]))

	if err := func() error { // a scope of its own: its names are the guide's
		// guide:begin map
		m, err := target.Map(ictx, segment.Read|segment.Write) // ErrPermission on a READ grant
		if err != nil {
			return err
		}
		defer m.Unmap()     // Target.Unimport unmaps too
		b, err := m.Bytes() // the owner's memory itself, valid until Unmap
		if err != nil {
			return err
		}
		copy(b, "stored by the importer")
		n, err := m.LoadUint64(512) // an atomic load, never torn
		// guide:end map
		if err != nil {
			return err
		}
		const want = "stored by the importer"
		if got := string(mem.Bytes()[:len(want)]); got != want || n != 42 {
			return fmt.Errorf("map: the owner's segment holds %q, counter %d", got, n)
		}
		fmt.Fprintf(w, "map: %q in the owner's segment, counter %d\n", want, n)
		return nil
	}(); err != nil {
		return err
	}

	// guide:begin arm
	if err := ownerJFR.Recv(mem.SGE(1088, 64), 11); err != nil {
		return err
	}
	if err := ownerJFC.Rearm(false); err != nil { // true: only solicited or failed records
		return err
	}
	// guide:end arm
	// Armed, with nothing arrived: a done context only checks, and a
	// deadline's error matches urma.ErrTimeout.
	expired, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	if _, err := jfce.Wait(expired, make([]*jetty.JFC, 1)); !errors.Is(err, urma.ErrTimeout) {
		return fmt.Errorf("event: an event before any record (%v)", err)
	}

	// guide:begin wait
	copy(buf[192:], "wake")
	sent := make(chan error, 1)
	go func() { sent <- peerJFS.Send(remote, local.SGE(192, 4), 0, 5) }() // the peer, meanwhile
	jfcs := make([]*jetty.JFC, 1)
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if _, err := jfce.Wait(wctx, jfcs); err != nil { // sleeps until a JFC has an event
		return err
	}
	if err := jfcs[0].Ack(1); err != nil { // each event is acked before the JFC's Close
		return err
	}
	if err := complete(ownerJFC, crs[:1]); err != nil {
		return err
	}
	// guide:end wait
	if got := string(mem.Bytes()[1088:][:crs[0].Len]); jfcs[0] != ownerJFC || got != "wake" || crs[0].UserCtx != 11 {
		return fmt.Errorf("event: woken for %p (want %p), received %q, record %v", jfcs[0], ownerJFC, got, crs[0])
	}
	if err := errors.Join(<-sent, complete(peerJFC, crs[:1])); err != nil {
		return fmt.Errorf("event: the peer's send: %w", err)
	}
	fmt.Fprintf(w, "event: woken, %q received\n", mem.Bytes()[1088:1092])

	// guide:begin err-sentinel
	_, err = segment.Import(ictx, peer, segDesc, segToken+1)
	if !errors.Is(err, urma.ErrPermission) {
		return fmt.Errorf("a wrong token: want urma.ErrPermission, got %v", err)
	}
	// guide:end err-sentinel
	fmt.Fprintf(w, "errors: wrong token: %v\n", err)

	// guide:begin err-post
	err = peerJFS.Post([]jetty.WR{
		{Opcode: urma.OpNOP, Flags: jetty.Signaled, UserCtx: 6},
		{Opcode: urma.OpFAdd, Flags: jetty.Signaled, UserCtx: 7, To: remote, Operand: 1,
			Local: []segment.SGE{local.SGE(256, 4)}, Remote: target.SGE(512, 8)}, // 4 bytes: atomics need 8
	})
	var pe *jetty.PostError
	if !errors.As(err, &pe) || !errors.Is(err, urma.ErrInvalid) {
		return fmt.Errorf("want a *jetty.PostError wrapping urma.ErrInvalid, got %v", err)
	}
	if err := complete(peerJFC, crs[:pe.Index]); err != nil { // the requests before pe.Index were queued
		return err
	}
	// guide:end err-post
	if pe.Index != 1 || crs[0].WROpcode != urma.OpNOP || crs[0].UserCtx != 6 {
		return fmt.Errorf("post: index %d, record %v", pe.Index, crs[0])
	}
	fmt.Fprintf(w, "errors: post: %v\n", err)

	// guide:begin err-cr
	if err := peerJFS.Write(remote, target.SGE(4088, 16), local.SGE(0, 16), 0, 8); err != nil { // past the end
		return err
	}
	err = complete(peerJFC, crs[:1]) // crs[0].Err()
	var crErr *jetty.CRError
	if !errors.As(err, &crErr) || crErr.Status != urma.CRRemAccessAbortErr {
		return fmt.Errorf("want REM_ACCESS_ABORT_ERR, got %v", err)
	}
	// guide:end err-cr
	if crs[0].Status != urma.CRRemAccessAbortErr || crErr.UserCtx != 8 {
		return fmt.Errorf("cr: record %v, error %v", crs[0], crErr)
	}
	fmt.Fprintf(w, "errors: record: %v\n", err)

	// guide:begin async
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := peer.GetAsyncEvent(ctx) // peerJFS went to StateError
	if err != nil {
		return err
	}
	if err := ev.Ack(); err != nil { // before peerJFS.Close, which refuses otherwise
		return err
	}
	// guide:end async
	attr, err := peerJFS.Query()
	if err != nil {
		return err
	}
	if ev.Type != urma.EventJFSErr || ev.Object != peerJFS || attr.State != urma.StateError {
		return fmt.Errorf("async: event %v on %T, queue state %v", ev.Type, ev.Object, attr.State)
	}
	fmt.Fprintf(w, "async: %v on the peer's JFS, acked\n", ev.Type)

	// guide:begin ping
	rtt, err := peer.Ping(ctx, owner.EID(), &urma.PingOptions{UASID: owner.UASID(), Size: 16})
	// guide:end ping
	if err != nil {
		return err
	}
	if rtt <= 0 {
		return fmt.Errorf("ping: round trip %v", rtt)
	}
	fmt.Fprintln(w, "ping: the owner's context answered")

	// guide:begin close
	err = errors.Join(
		remote.Unimport(),
		target.Unimport(),
		peerJFS.Close(),
		peerJFC.Close(),
		ownerJFR.Close(),
		ownerJFC.Close(),
		jfce.Close(),
		local.Unregister(),
		mem.Unregister(),
		peer.Close(),
		owner.Close(),
	)
	// guide:end close
	if err != nil {
		return fmt.Errorf("close: %w", err)
	}
	fmt.Fprintln(w, "close: ok")
	return nil
}
