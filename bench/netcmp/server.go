package main

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"google.golang.org/grpc"

	"github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/urmanet"
)

// roleEnv, set to "server" in its environment, makes the program (or the
// test binary) the server process: it listens on every transport, prints
// their addresses as one line of JSON, serves until its standard input
// closes, then exits.
const roleEnv = "NETCMP_ROLE"

// addrs are the server's listening addresses, one per transport.
type addrs struct {
	TCP, Unix, URMA, URMAPoll string // raw streams: echo and sink
	GRPCTCP, GRPCURMA         string // the same gRPC server on two listeners
}

// Raw connections start with one byte that picks what the server does.
const (
	modeEcho = 'e' // write back whatever is read
	modeSink = 's' // bursts: an 8-byte length, that many bytes, a 1-byte ack
)

// serve runs the server process until stdin reaches EOF.
func serve(stdin io.Reader, stdout io.Writer) error {
	dir := os.Getenv(loopback.EnvRuntimeDir)
	if dir == "" {
		return fmt.Errorf("%s is not set: the server runs in its client's runtime directory", loopback.EnvRuntimeDir)
	}
	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		return err
	}
	uctx, err := urma.Open(dev, 0, nil)
	if err != nil {
		return err
	}
	defer uctx.Close()

	var ls []net.Listener
	var lerr error
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	listen := func(l net.Listener, err error) net.Listener {
		if err != nil {
			lerr = cmp.Or(lerr, err)
			return nil
		}
		ls = append(ls, l)
		return l
	}
	tcp := listen(net.Listen("tcp", "127.0.0.1:0"))
	unix := listen(net.Listen("unix", filepath.Join(dir, "netcmp.sock")))
	um := listen(urmanet.Listen(uctx, ":0"))
	ump := listen((&urmanet.ListenConfig{Poll: true}).Listen(uctx, ":0"))
	gtcp := listen(net.Listen("tcp", "127.0.0.1:0"))
	gum := listen(urmanet.Listen(uctx, ":0"))
	if lerr != nil {
		return lerr
	}

	// Connections still open when stdin closes end with the process.
	for _, l := range []net.Listener{tcp, unix, um, ump} {
		go acceptRaw(l)
	}
	gs := grpc.NewServer()
	gs.RegisterService(&echoDesc, echoService{})
	defer gs.Stop()
	for _, l := range []net.Listener{gtcp, gum} {
		go gs.Serve(l)
	}

	line, err := json.Marshal(addrs{
		TCP: tcp.Addr().String(), Unix: unix.Addr().String(),
		URMA: um.Addr().String(), URMAPoll: ump.Addr().String(),
		GRPCTCP: gtcp.Addr().String(), GRPCURMA: gum.Addr().String(),
	})
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		return err
	}
	io.Copy(io.Discard, stdin)
	return nil
}

func acceptRaw(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			handleRaw(c)
		}()
	}
}

// handleRaw serves one raw connection with the same code on every
// transport: plain Read and Write on the net.Conn (no io.Copy, which
// would take TCP's splice path and so do other work than the rest).
func handleRaw(c net.Conn) {
	var mode [1]byte
	if _, err := io.ReadFull(c, mode[:]); err != nil {
		return
	}
	switch mode[0] {
	case modeEcho:
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	case modeSink:
		buf := make([]byte, 1<<20)
		var hdr [8]byte
		for {
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				return
			}
			for left := int64(binary.LittleEndian.Uint64(hdr[:])); left > 0; {
				n, err := c.Read(buf[:min(left, int64(len(buf)))])
				left -= int64(n)
				if err != nil {
					return
				}
			}
			if _, err := c.Write(hdr[:1]); err != nil {
				return
			}
		}
	}
}

// serverMain is main's and TestMain's entry for the server role.
func serverMain() int {
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "netcmp server:", err)
		return 1
	}
	return 0
}
