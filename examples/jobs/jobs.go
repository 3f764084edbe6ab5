package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"

	"github.com/urma-go/sdk/bootstrap"
	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/urma"
)

// The client drives: for each job it posts its request (or, for receive,
// has a receive posted and asks the server to SEND), then names the job on
// the out-of-band connection; the server does its part (takes the
// message, looks at its memory) and answers with one line, what it saw.
// "bye" ends the session.

// The bytes and values the jobs move.
const (
	serverMsg = "a message from the server"
	clientMsg = "a message from the client"
	writeMsg  = "written by the client"
	readMsg   = "the server's bytes, read by the client"
	sendImm   = 0x5e4d
	writeImm  = 0x3a7e
	casSwap   = 42
	faddAdd   = 8
)

// both runs the server and the client in this process, on two EIDs of the
// device when it has them.
func both(ctx context.Context, w io.Writer, cfg config) error {
	return exutil.Both(
		func(l net.Listener) error { return serve(ctx, w, cfg, l) },
		func(addr string) error { return runClient(ctx, w, cfg, addr) })
}

// serveOn listens on addr and serves one client.
func serveOn(ctx context.Context, w io.Writer, cfg config, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return serve(ctx, w, cfg, l)
}

// serve serves one client on l, which it closes.
func serve(ctx context.Context, w io.Writer, cfg config, l net.Listener) (err error) {
	defer l.Close()
	e, err := newEnd(cfg, false)
	defer func() { err = joinClose(err, e) }()
	if err != nil {
		return err
	}
	copy(e.mem.Bytes()[readOff:wordOff], readMsg)
	fmt.Fprintf(w, "server: %s/%s, eid %v, waiting on %s\n", e.uctx.Device().Provider(), e.uctx.Device().Name(), e.uctx.EID(), l.Addr())
	conn, err := exutil.Accept(ctx, l)
	if err != nil {
		return err
	}
	defer conn.Close()
	peer, err := bootstrap.Exchange(ctx, conn, e.bundle())
	if err != nil {
		return err
	}
	if err := e.importPeer(ctx, peer, false); err != nil {
		return err
	}
	lines := bufio.NewScanner(conn)
	for lines.Scan() {
		name := lines.Text()
		if name == "bye" {
			return nil
		}
		saw, err := e.serveJob(ctx, name)
		if err != nil {
			return fmt.Errorf("%s job: %w", name, err)
		}
		if _, err := fmt.Fprintln(conn, saw); err != nil {
			return err
		}
	}
	if err := lines.Err(); err != nil {
		return err
	}
	return fmt.Errorf("the client left without saying bye")
}

// serveJob does the server's part of the job and says what it saw.
func (e *end) serveJob(ctx context.Context, name string) (string, error) {
	switch name {
	case "recv":
		if err := e.jfs.Send(e.peer, e.put(serverMsg), jetty.Signaled, 0); err != nil {
			return "", err
		}
		if err := e.sent(ctx, urma.OpSend); err != nil {
			return "", err
		}
		return fmt.Sprintf("sent %d B", len(serverMsg)), nil
	case "send", "send-imm":
		op := jetty.CRSend
		if name == "send-imm" {
			op = jetty.CRSendImm
		}
		cr, msg, err := e.received(ctx, op)
		if err != nil {
			return "", err
		}
		saw := fmt.Sprintf("received %d B %q", cr.Len, msg)
		if op == jetty.CRSendImm {
			saw += fmt.Sprintf(" with immediate %#x", cr.Imm)
		}
		return saw, nil
	case "write":
		return fmt.Sprintf("finds %q in its segment", e.written(len(writeMsg))), nil
	case "write-imm":
		cr, _, err := e.received(ctx, jetty.CRWriteImm)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("took a receive for immediate %#x and finds %q in its segment", cr.Imm, e.written(len(writeMsg))), nil
	case "read":
		return "did nothing: a READ takes no part of its CPU", nil
	case "cas", "fadd":
		word, err := e.word()
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("finds its word at %d", word.Load()), nil
	}
	return "", fmt.Errorf("no such job")
}

// written is what the client's WRITE left in the server's segment.
func (e *end) written(n int) string { return string(e.mem.Bytes()[writeOff : writeOff+n]) }

// runClient connects to the server at addr and runs cfg's jobs.
func runClient(ctx context.Context, w io.Writer, cfg config, addr string) (err error) {
	e, err := newEnd(cfg, true)
	defer func() { err = joinClose(err, e) }()
	if err != nil {
		return err
	}
	conn, err := exutil.Dial(ctx, addr, waitLimit)
	if err != nil {
		return fmt.Errorf("connect to the server at %s: %w", addr, err)
	}
	defer conn.Close()
	peer, err := bootstrap.Exchange(ctx, conn, e.bundle())
	if err != nil {
		return err
	}
	if err := e.importPeer(ctx, peer, true); err != nil {
		return err
	}
	fmt.Fprintf(w, "client: %s/%s, eid %v, connected to %s, %s\n", e.uctx.Device().Provider(), e.uctx.Device().Name(), e.uctx.EID(), addr, modeName(cfg))
	answers := bufio.NewScanner(conn)
	for _, name := range cfg.jobs {
		j := jobNamed(name)
		did, err := e.runJob(ctx, name, conn)
		if err != nil {
			return fmt.Errorf("%s job: %w", j.name, err)
		}
		if !answers.Scan() {
			return fmt.Errorf("%s job: the server did not answer: %v", j.name, orEOF(answers.Err()))
		}
		fmt.Fprintf(w, "job %-21s ok: %s; the server %s\n", j.name+":", did, answers.Text())
	}
	_, err = fmt.Fprintln(conn, "bye")
	return err
}

// runJob posts the client's part of the job, names it to the server
// (whose answer the caller reads) and says what the client saw.
func (e *end) runJob(ctx context.Context, name string, conn io.Writer) (string, error) {
	tell := func() error { _, err := fmt.Fprintln(conn, name); return err }
	t := e.target
	switch name {
	case "recv":
		// A receive is posted in every slot: the server's SEND takes one.
		if err := tell(); err != nil {
			return "", err
		}
		cr, msg, err := e.received(ctx, jetty.CRSend)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("received %d B %q", cr.Len, msg), nil
	case "send", "send-imm":
		var err error
		if name == "send" {
			err = e.jfs.Send(e.peer, e.put(clientMsg), jetty.Signaled, 0)
		} else {
			err = e.jfs.SendImm(e.peer, e.put(clientMsg), sendImm, jetty.Signaled, 0)
		}
		if err == nil {
			err = e.sent(ctx, map[string]urma.Opcode{"send": urma.OpSend, "send-imm": urma.OpSendImm}[name])
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("sent %d B", len(clientMsg)), tell()
	case "write", "write-imm":
		var err error
		if name == "write" {
			err = e.jfs.Write(e.peer, t.SGE(writeOff, uint32(len(writeMsg))), e.put(writeMsg), jetty.Signaled, 0)
		} else {
			err = e.jfs.WriteImm(e.peer, t.SGE(writeOff, uint32(len(writeMsg))), e.put(writeMsg), writeImm, jetty.Signaled, 0)
		}
		if err == nil {
			err = e.sent(ctx, map[string]urma.Opcode{"write": urma.OpWrite, "write-imm": urma.OpWriteImm}[name])
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("wrote %d B", len(writeMsg)), tell()
	case "read":
		if err := e.jfs.Read(e.peer, t.SGE(readOff, uint32(len(readMsg))), e.mem.SGE(readOff, uint32(len(readMsg))), jetty.Signaled, 0); err != nil {
			return "", err
		}
		if err := e.sent(ctx, urma.OpRead); err != nil {
			return "", err
		}
		return fmt.Sprintf("read %q", e.mem.Bytes()[readOff:readOff+len(readMsg)]), tell()
	case "cas", "fadd":
		old, err := e.word()
		if err != nil {
			return "", err
		}
		var did string
		if name == "cas" {
			err = e.jfs.CompareSwap(e.peer, t.SGE(wordOff, 8), e.mem.SGE(wordOff, 8), 0, casSwap, jetty.Signaled, 0)
			did = fmt.Sprintf("compared with 0, swapped in %d", casSwap)
		} else {
			err = e.jfs.FetchAdd(e.peer, t.SGE(wordOff, 8), e.mem.SGE(wordOff, 8), faddAdd, jetty.Signaled, 0)
			did = fmt.Sprintf("added %d", faddAdd)
		}
		if err == nil {
			err = e.sent(ctx, map[string]urma.Opcode{"cas": urma.OpCAS, "fadd": urma.OpFAdd}[name])
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s: the word was %d", did, old.Load()), tell()
	}
	return "", fmt.Errorf("no such job")
}

// jobNamed returns the job of a flag name.
func jobNamed(flag string) job {
	for _, j := range jobs {
		if j.flag == flag {
			return j
		}
	}
	return job{flag: flag, name: flag}
}

func orEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// joinClose closes e and adds its error to err.
func joinClose(err error, e *end) error {
	if cerr := e.close(); cerr != nil {
		if err == nil {
			return cerr
		}
		return fmt.Errorf("%w (and closing: %v)", err, cerr)
	}
	return err
}

// modeName says how the jobs travel.
func modeName(cfg config) string {
	if cfg.um {
		return "UM datagrams"
	}
	return "RM"
}
