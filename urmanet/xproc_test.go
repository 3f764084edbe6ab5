package urmanet_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/urmanet"
)

// childListen opens a context on loopback0's first EID and listens at a
// free port of it, for a child process of these tests.
func childListen() (*urma.Context, net.Listener, error) {
	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		return nil, nil, err
	}
	uctx, err := urma.Open(dev, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	l, err := urmanet.Listen(uctx, ":0")
	if err != nil {
		uctx.Close()
		return nil, nil, err
	}
	return uctx, l, nil
}

// childEnv makes the test binary a listener process that echoes one
// connection: it prints its address, then copies what it reads back.
const childEnv = "URMANET_TEST_CHILD"

func child() int {
	uctx, l, err := childListen()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer uctx.Close()
	defer l.Close()
	fmt.Println(l.Addr())
	c, err := l.Accept()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	if _, err := io.Copy(c, c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func TestCrossProcessEcho(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	addr := strings.TrimSpace(line)

	client := openCtx(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := urmanet.Dial(ctx, client, addr)
	require.NoError(t, err)
	defer c.Close()
	want := make([]byte, 5*urmanet.Window*urmanet.SlotSize/2)
	for i := range want {
		want[i] = byte(i ^ i>>8)
	}
	go func() {
		c.Write(want)
		c.(*urmanet.Conn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	require.Equal(t, len(want), len(got))
	require.Equal(t, want, got)
	require.NoError(t, c.Close())
	require.NoError(t, cmd.Wait())
}
