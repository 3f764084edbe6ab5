package rdmacm_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"time"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/rdmacm"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// An rping client in URMA terms: connect a Jetty to rping -s, advertise a
// buffer by address and rkey, and wait for the server's "go ahead" after
// it has READ the buffer. It needs a verbs device, so it is not run here.
func ExampleDial() {
	dev, err := urma.DeviceByName("rxe0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, err := urma.Open(dev, 0, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	jfc, _ := jetty.NewJFC(ctx, jetty.JFCConfig{Depth: 16})
	j, _ := jetty.NewJetty(ctx, jetty.JettyConfig{Send: jetty.JFSConfig{Depth: 8, Mode: urma.RC, JFC: jfc}, Recv: jetty.JFRConfig{Depth: 8}})
	buf, _ := segment.Alloc(ctx, 4096, segment.Config{Access: segment.Read | segment.Write})
	_ = j.Recv(buf.SGE(2048, 16), 1) // for the go ahead

	dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := rdmacm.Dial(dctx, j, "169.254.77.1:7174")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	va, rkey, _ := conn.Key(buf)
	ad := buf.Bytes()[1024:1040] // rping's {buf, rkey, size}, big-endian
	binary.BigEndian.PutUint64(ad, va)
	binary.BigEndian.PutUint32(ad[8:], rkey)
	binary.BigEndian.PutUint32(ad[12:], 64)
	copy(buf.Bytes(), "rdma-ping-0: hello")
	_ = j.Send(nil, buf.SGE(1024, 16), 0, 2)
	crs := make([]jetty.CR, 4)
	for got := 0; got < 2; {
		n, _ := jfc.Poll(crs)
		got += n
	}
	fmt.Println("the server has read the buffer")
}
