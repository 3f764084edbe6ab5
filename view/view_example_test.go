package view_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log"
	"time"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/view"
)

// must stops the example on an error.
func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

// The storage example's server side: READ a client's plain data straight
// into 4096-byte chunks of [4048 data | 44 metadata | CRC32], the CRC
// computed on the way in; later a flipped byte in a stored chunk is caught
// when the chunks are written back out (check and strip).
func ExampleView() {
	dev := must(urma.DeviceByName("loopback0"))
	server, client := must(urma.Open(dev, 0, nil)), must(urma.Open(dev, 1, nil))
	defer client.Close()
	defer server.Close()

	// The client's data: 2 chunks' worth of plain bytes.
	const chunks = 2
	data := must(segment.Alloc(client, chunks*4092, segment.Config{Access: segment.Read | segment.Write}))
	for i := range data.Bytes() {
		data.Bytes()[i] = byte(i)
	}

	// The server: storage memory, a view over it, and a queue to the client.
	store := must(segment.Alloc(server, chunks*4096, segment.Config{Access: segment.LocalOnly}))
	v := must(view.New(server, view.Config{
		Layout: view.Layout{Repeat: chunks, Entries: []view.LayoutEntry{
			{Mem: store, Off: 0, Bytes: 4048, Skip: 48},    // data
			{Mem: store, Off: 4048, Bytes: 48, Skip: 4048}, // metadata, CRC last
		}},
		Memory: &view.Signature{Kind: view.SigCRC32, BlockSize: view.BlockChunk},
	}))
	defer v.Close()
	jfc := must(jetty.NewJFC(server, jetty.JFCConfig{}))
	jfs := must(jetty.NewJFS(server, jetty.JFSConfig{Mode: urma.RM, JFC: jfc}))
	cjfc := must(jetty.NewJFC(client, jetty.JFCConfig{}))
	cjfr := must(jetty.NewJFR(client, jetty.JFRConfig{JFC: cjfc}))
	toClient := must(jetty.ImportJFR(context.Background(), server, cjfr.Descriptor(), 0))
	remote := must(segment.Import(context.Background(), server, data.Descriptor(), 0))
	poll := func() jetty.CR {
		crs := make([]jetty.CR, 1)
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			if n := must(jfc.Poll(crs)); n == 1 {
				return crs[0]
			}
		}
		log.Fatal("no completion")
		return jetty.CR{}
	}

	// READ: plain on the wire, signed in memory.
	if err := jfs.Read(toClient, remote.SGE(0, chunks*4092), v.SGE(0, uint32(v.Len())), 0, 1); err != nil {
		log.Fatal(err)
	}
	cr := poll()
	chunk1 := store.Bytes()[4096:8192]
	fmt.Println(cr.WROpcode, cr.Status, "wire bytes", cr.Len)
	fmt.Println("chunk 1 CRC matches hash/crc32:", binary.BigEndian.Uint32(chunk1[4092:]) == crc32.ChecksumIEEE(chunk1[:4092]))

	// Corrupt chunk 1, then WRITE the chunks back: check and strip.
	chunk1[100] ^= 0xff
	if err := jfs.Write(toClient, remote.SGE(0, chunks*4092), v.SGE(0, uint32(v.Len())), 0, 2); err != nil {
		log.Fatal(err)
	}
	cr = poll()
	fmt.Println(cr.WROpcode, cr.Status, errors.Is(cr.Err(), urma.ErrSignature))
	var se *view.SigError
	if errors.As(v.Check(), &se) {
		fmt.Println("bad block", se.Block)
	}
	// Output:
	// READ SUCCESS wire bytes 8184
	// chunk 1 CRC matches hash/crc32: true
	// WRITE SIGNATURE_ERR true
	// bad block 1
}
