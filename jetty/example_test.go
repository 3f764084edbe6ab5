package jetty_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"time"

	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// open opens a context on EID index i of the loopback device.
func open(i int) *urma.Context {
	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, err := urma.Open(dev, i, nil)
	if err != nil {
		log.Fatal(err)
	}
	return ctx
}

// must stops the example on an error.
func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

// pollOne polls jfc until it yields a record.
func pollOne(jfc *jetty.JFC) jetty.CR {
	crs := make([]jetty.CR, 1)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if n := must(jfc.Poll(crs)); n == 1 {
			return crs[0]
		}
	}
	log.Fatal("no completion")
	return jetty.CR{}
}

// One-sided WRITE: the client writes into the server's segment without the
// server taking part, then polls the record of its signaled request.
func ExampleJFS_Write() {
	server, client := open(0), open(1)
	defer server.Close()
	defer client.Close()

	// Server: a writable segment and a JFR that names the server as a target.
	mem := must(segment.Alloc(server, 4096, segment.Config{Access: segment.Read | segment.Write}))
	sjfc := must(jetty.NewJFC(server, jetty.JFCConfig{Depth: 64}))
	jfr := must(jetty.NewJFR(server, jetty.JFRConfig{Depth: 64, JFC: sjfc}))

	// Client: import both, then write from a local segment.
	tgt := must(segment.Import(context.Background(), client, mem.Descriptor(), 0))
	remote := must(jetty.ImportJFR(context.Background(), client, jfr.Descriptor(), 0))
	jfc := must(jetty.NewJFC(client, jetty.JFCConfig{Depth: 64}))
	jfs := must(jetty.NewJFS(client, jetty.JFSConfig{Depth: 64, Mode: urma.RM, JFC: jfc}))
	src := must(segment.Alloc(client, 4096, segment.Config{Access: segment.LocalOnly}))
	copy(src.Bytes(), "hello, urma")

	if err := jfs.Write(remote, tgt.SGE(0, 11), src.SGE(0, 11), 0, 42); err != nil {
		log.Fatal(err)
	}
	cr := pollOne(jfc)
	fmt.Println(cr.WROpcode, cr.Status, "len", cr.Len, "ctx", cr.UserCtx)
	fmt.Printf("server memory: %q\n", mem.Bytes()[:11])
	// Output:
	// WRITE SUCCESS len 11 ctx 42
	// server memory: "hello, urma"
}

// Two-sided SEND: the receiver posts a buffer with Recv, the sender's
// message lands in it and both sides get a record.
func ExampleJFR_Recv() {
	server, client := open(0), open(1)
	defer server.Close()
	defer client.Close()

	sjfc := must(jetty.NewJFC(server, jetty.JFCConfig{Depth: 64}))
	jfr := must(jetty.NewJFR(server, jetty.JFRConfig{Depth: 32, JFC: sjfc}))
	buf := must(segment.Alloc(server, 256, segment.Config{Access: segment.LocalOnly}))
	if err := jfr.Recv(buf.SGE(0, 256), 7); err != nil {
		log.Fatal(err)
	}

	cjfc := must(jetty.NewJFC(client, jetty.JFCConfig{Depth: 64}))
	jfs := must(jetty.NewJFS(client, jetty.JFSConfig{Depth: 32, JFC: cjfc}))
	msg := must(segment.Alloc(client, 256, segment.Config{Access: segment.LocalOnly}))
	n := copy(msg.Bytes(), "ping")
	remote := must(jetty.ImportJFR(context.Background(), client, jfr.Descriptor(), 0))
	if err := jfs.SendImm(remote, msg.SGE(0, uint32(n)), 0xabc, 0, 1); err != nil {
		log.Fatal(err)
	}

	send := pollOne(cjfc)
	fmt.Println("sender:", send.WROpcode, send.Status)
	recv := pollOne(sjfc)
	fmt.Println("receiver:", recv.Opcode, recv.Status, "ctx", recv.UserCtx, "imm", fmt.Sprintf("%#x", recv.Imm),
		"recv flag", recv.Flags&jetty.CRRecv != 0)
	fmt.Printf("received: %q\n", buf.Bytes()[:recv.Len])
	// Output:
	// sender: SEND_IMM SUCCESS
	// receiver: SEND_WITH_IMM SUCCESS ctx 7 imm 0xabc recv flag true
	// received: "ping"
}

// Event mode: instead of spinning on Poll, arm the JFC and sleep on its
// JFCE until the next record arrives.
func ExampleJFC_Wait() {
	server, client := open(0), open(1)
	defer server.Close()
	defer client.Close()

	jfce := must(jetty.NewJFCE(server))
	sjfc := must(jetty.NewJFC(server, jetty.JFCConfig{Depth: 64, JFCE: jfce}))
	jfr := must(jetty.NewJFR(server, jetty.JFRConfig{Depth: 32, JFC: sjfc}))
	buf := must(segment.Alloc(server, 64, segment.Config{Access: segment.LocalOnly}))
	if err := jfr.Recv(buf.SGE(0, 64), 1); err != nil {
		log.Fatal(err)
	}
	// Arm before sleeping; Rearm fails with urma.ErrAgain while records are
	// unread, so nothing that arrived earlier is missed.
	if err := sjfc.Rearm(false); err != nil {
		log.Fatal(err)
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		cjfc := must(jetty.NewJFC(client, jetty.JFCConfig{Depth: 64}))
		jfs := must(jetty.NewJFS(client, jetty.JFSConfig{Depth: 32, JFC: cjfc}))
		remote := must(jetty.ImportJFR(context.Background(), client, jfr.Descriptor(), 0))
		msg := must(segment.Alloc(client, 64, segment.Config{Access: segment.LocalOnly}))
		copy(msg.Bytes(), "wake up")
		if err := jfs.Send(remote, msg.SGE(0, 7), 0, 2); err != nil {
			log.Fatal(err)
		}
		pollOne(cjfc)
	}()

	// Wait acknowledges the event itself. Other JFCs may share the JFCE,
	// each with a waiter of its own (or JFCE.Wait and JFC.Ack for all).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sjfc.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	cr := pollOne(sjfc)
	<-done
	fmt.Println("event, then", cr.Opcode, cr.Status, "len", cr.Len)
	fmt.Println("data ok:", bytes.Equal(buf.Bytes()[:cr.Len], []byte("wake up")))
	// Output:
	// event, then SEND SUCCESS len 7
	// data ok: true
}

// Spin, then park: PollWait polls for up to the spin budget and then
// sleeps on the JFC's own JFCE until a record arrives. A reply that is
// quick costs no wake-up; a slow one costs no CPU.
func ExampleJFC_PollWait() {
	server, client := open(0), open(1)
	defer server.Close()
	defer client.Close()

	jfce := must(jetty.NewJFCE(server))
	sjfc := must(jetty.NewJFC(server, jetty.JFCConfig{Depth: 64, JFCE: jfce}))
	jfr := must(jetty.NewJFR(server, jetty.JFRConfig{Depth: 32, JFC: sjfc}))
	buf := must(segment.Alloc(server, 64, segment.Config{Access: segment.LocalOnly}))
	if err := jfr.Recv(buf.SGE(0, 64), 1); err != nil {
		log.Fatal(err)
	}

	cjfc := must(jetty.NewJFC(client, jetty.JFCConfig{Depth: 64}))
	jfs := must(jetty.NewJFS(client, jetty.JFSConfig{Depth: 32, JFC: cjfc}))
	remote := must(jetty.ImportJFR(context.Background(), client, jfr.Descriptor(), 0))
	msg := must(segment.Alloc(client, 64, segment.Config{Access: segment.LocalOnly}))
	copy(msg.Bytes(), "ping")
	go func() {
		time.Sleep(10 * time.Millisecond)
		if err := jfs.Send(remote, msg.SGE(0, 4), 0, 2); err != nil {
			log.Fatal(err)
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	crs := make([]jetty.CR, 16)
	n := must(sjfc.PollWait(ctx, crs, 50*time.Microsecond))
	fmt.Println(n, crs[0].Opcode, crs[0].Status, string(buf.Bytes()[:crs[0].Len]))
	// The sender's own record, polled the same way (its JFC has no JFCE,
	// so it only spins).
	n = must(cjfc.PollWait(ctx, crs, 0))
	fmt.Println(n, crs[0].WROpcode, crs[0].Status)
	// Output:
	// 1 SEND SUCCESS ping
	// 1 SEND SUCCESS
}

// A request prepared once and posted many times: a counter bumped with
// fetch-and-add, each post with its own operand and user context. Each
// Post skips the checks Prepare made.
func ExamplePrepared() {
	server, client := open(0), open(1)
	defer server.Close()
	defer client.Close()

	counter := must(segment.Alloc(server, 64, segment.Config{Access: segment.Read | segment.Write | segment.Atomic}))
	sjfc := must(jetty.NewJFC(server, jetty.JFCConfig{Depth: 64}))
	jfr := must(jetty.NewJFR(server, jetty.JFRConfig{Depth: 64, JFC: sjfc}))

	tgt := must(segment.Import(context.Background(), client, counter.Descriptor(), 0))
	remote := must(jetty.ImportJFR(context.Background(), client, jfr.Descriptor(), 0))
	jfc := must(jetty.NewJFC(client, jetty.JFCConfig{Depth: 64}))
	jfs := must(jetty.NewJFS(client, jetty.JFSConfig{Depth: 64, Mode: urma.RM, JFC: jfc}))
	result := must(segment.Alloc(client, 64, segment.Config{Access: segment.LocalOnly}))

	faa := must(jfs.Prepare(jetty.WR{Opcode: urma.OpFAdd, Flags: jetty.Signaled, To: remote,
		Local: []segment.SGE{result.SGE(0, 8)}, Remote: tgt.SGE(0, 8)}))
	for i := uint64(1); i <= 3; i++ {
		faa.SetAtomic(0, 10*i)
		faa.SetUserCtx(i)
		if err := faa.Post(); err != nil {
			log.Fatal(err)
		}
		cr := pollOne(jfc)
		fmt.Println(cr.WROpcode, cr.Status, "ctx", cr.UserCtx, "old", binary.NativeEndian.Uint64(result.Bytes()))
	}
	fmt.Println("counter", binary.NativeEndian.Uint64(counter.Bytes()))
	// Output:
	// FADD SUCCESS ctx 1 old 0
	// FADD SUCCESS ctx 2 old 10
	// FADD SUCCESS ctx 3 old 30
	// counter 60
}

// A chain of READs where each leaves as soon as the last one completes:
// PostAfter waits for the records and posts the next request from the
// poll that finds them (on the ib provider, in the same C call).
func ExamplePrepared_PostAfter() {
	server, client := open(0), open(1)
	defer server.Close()
	defer client.Close()

	data := must(segment.Alloc(server, 64, segment.Config{Access: segment.Read}))
	copy(data.Bytes(), "chained")
	sjfc := must(jetty.NewJFC(server, jetty.JFCConfig{Depth: 8}))
	jfr := must(jetty.NewJFR(server, jetty.JFRConfig{Depth: 8, JFC: sjfc}))

	tgt := must(segment.Import(context.Background(), client, data.Descriptor(), 0))
	remote := must(jetty.ImportJFR(context.Background(), client, jfr.Descriptor(), 0))
	jfc := must(jetty.NewJFC(client, jetty.JFCConfig{Depth: 8}))
	jfs := must(jetty.NewJFS(client, jetty.JFSConfig{Depth: 1, Mode: urma.RM, JFC: jfc}))
	buf := must(segment.Alloc(client, 64, segment.Config{Access: segment.LocalOnly}))

	read := must(jfs.Prepare(jetty.WR{Opcode: urma.OpRead, Flags: jetty.Signaled, To: remote,
		Local: []segment.SGE{buf.SGE(0, 7)}, Remote: tgt.SGE(0, 7)}))
	if err := read.Post(); err != nil {
		log.Fatal(err)
	}
	crs := make([]jetty.CR, 4)
	for i := uint64(1); i <= 2; i++ {
		read.SetUserCtx(i)
		// The queue holds one request: the next READ needs the last one's
		// record first, and PostAfter posts it right after that record.
		n, err := read.PostAfter(context.Background(), jfc, crs, 0)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(n, "record: ctx", crs[0].UserCtx, crs[0].Status)
	}
	cr := pollOne(jfc)
	fmt.Println("last: ctx", cr.UserCtx, cr.Status, string(buf.Bytes()[:7]))
	// Output:
	// 1 record: ctx 0 SUCCESS
	// 1 record: ctx 1 SUCCESS
	// last: ctx 2 SUCCESS chained
}

// A WRITE that answers a peer's WRITE: PostWhen posts it the moment the
// flag byte the peer writes last holds the value.
func ExamplePrepared_PostWhen() {
	server, client := open(0), open(1)
	defer server.Close()
	defer client.Close()

	// The server's inbox, which the client's request lands in; its byte 7
	// is the flag.
	inbox := must(segment.Alloc(server, 64, segment.Config{Access: segment.Read | segment.Write}))
	sjfc := must(jetty.NewJFC(server, jetty.JFCConfig{Depth: 16}))
	sjfr := must(jetty.NewJFR(server, jetty.JFRConfig{Depth: 8, JFC: sjfc}))
	// The client's inbox, which the server's answer lands in.
	answers := must(segment.Alloc(client, 64, segment.Config{Access: segment.Read | segment.Write}))
	cjfc := must(jetty.NewJFC(client, jetty.JFCConfig{Depth: 16}))
	cjfr := must(jetty.NewJFR(client, jetty.JFRConfig{Depth: 8, JFC: cjfc}))

	// The server prepares its answer.
	toClient := must(segment.Import(context.Background(), server, answers.Descriptor(), 0))
	clientJFR := must(jetty.ImportJFR(context.Background(), server, cjfr.Descriptor(), 0))
	sjfs := must(jetty.NewJFS(server, jetty.JFSConfig{Depth: 8, Mode: urma.RM, JFC: sjfc}))
	reply := must(segment.Alloc(server, 64, segment.Config{Access: segment.LocalOnly}))
	copy(reply.Bytes(), "pong")
	answer := must(sjfs.Prepare(jetty.WR{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: clientJFR,
		Local: []segment.SGE{reply.SGE(0, 4)}, Remote: toClient.SGE(0, 4)}))

	done := make(chan error, 1)
	go func() { done <- answer.PostWhen(context.Background(), &inbox.Bytes()[7], 1) }()

	// The client WRITEs "ping" with the flag last.
	toServer := must(segment.Import(context.Background(), client, inbox.Descriptor(), 0))
	serverJFR := must(jetty.ImportJFR(context.Background(), client, sjfr.Descriptor(), 0))
	cjfs := must(jetty.NewJFS(client, jetty.JFSConfig{Depth: 8, Mode: urma.RM, JFC: cjfc}))
	msg := must(segment.Alloc(client, 64, segment.Config{Access: segment.LocalOnly}))
	copy(msg.Bytes(), "ping\x00\x00\x00\x01")
	if err := cjfs.Post([]jetty.WR{{Opcode: urma.OpWrite, Flags: jetty.Signaled, To: serverJFR,
		Local: []segment.SGE{msg.SGE(0, 8)}, Remote: toServer.SGE(0, 8)}}); err != nil {
		log.Fatal(err)
	}
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	fmt.Println("server got", string(inbox.Bytes()[:4]), "and answered:", pollOne(sjfc).Status)
	fmt.Println("client's WRITE:", pollOne(cjfc).Status, "answer:", string(answers.Bytes()[:4]))
	// Output:
	// server got ping and answered: SUCCESS
	// client's WRITE: SUCCESS answer: pong
}

// A server that reposts its receives: the list is checked once by
// PrepareRecv, and each round posts again the receives it consumed.
func ExamplePreparedRecv() {
	server, client := open(0), open(1)
	defer server.Close()
	defer client.Close()

	sjfc := must(jetty.NewJFC(server, jetty.JFCConfig{Depth: 64}))
	jfr := must(jetty.NewJFR(server, jetty.JFRConfig{Depth: 4, JFC: sjfc}))
	buf := must(segment.Alloc(server, 4*64, segment.Config{Access: segment.LocalOnly}))
	wrs := make([]jetty.RecvWR, 4)
	for i := range wrs {
		wrs[i] = jetty.RecvWR{UserCtx: uint64(i), Local: []segment.SGE{buf.SGE(uint64(64*i), 64)}}
	}
	recvs := must(jfr.PrepareRecv(wrs))

	cjfc := must(jetty.NewJFC(client, jetty.JFCConfig{Depth: 64}))
	jfs := must(jetty.NewJFS(client, jetty.JFSConfig{Depth: 32, JFC: cjfc}))
	msg := must(segment.Alloc(client, 64, segment.Config{Access: segment.LocalOnly}))
	remote := must(jetty.ImportJFR(context.Background(), client, jfr.Descriptor(), 0))

	for round := range 2 {
		if err := recvs.Post(); err != nil {
			log.Fatal(err)
		}
		for i := range 4 {
			n := copy(msg.Bytes(), fmt.Sprintf("r%d m%d", round, i))
			if err := jfs.Send(remote, msg.SGE(0, uint32(n)), 0, 0); err != nil {
				log.Fatal(err)
			}
			pollOne(cjfc)
		}
		for i := range 4 {
			cr := pollOne(sjfc)
			at := 64 * cr.UserCtx
			if i > 0 {
				fmt.Print(", ")
			}
			fmt.Printf("%s", buf.Bytes()[at:at+uint64(cr.Len)])
		}
		fmt.Println()
	}
	// Output:
	// r0 m0, r0 m1, r0 m2, r0 m3
	// r1 m0, r1 m1, r1 m2, r1 m3
}
