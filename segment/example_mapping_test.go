package segment_test

import (
	"context"
	"fmt"
	"log"

	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Map an imported segment and load and store the owner's memory directly.
// A READ|WRITE grant gives a slice; a READ grant only a reader.
func ExampleTarget_Map() {
	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		log.Fatal(err)
	}
	owner, err := urma.Open(dev, 0, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer owner.Close()
	importer, err := urma.Open(dev, 1, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer importer.Close()
	fmt.Println("device maps imports:", importer.Device().Attr().MapImports)

	seg, err := segment.Alloc(owner, 4096, segment.Config{Access: segment.Read | segment.Write})
	if err != nil {
		log.Fatal(err)
	}
	defer seg.Unregister()
	tgt, err := segment.Import(context.Background(), importer, seg.Descriptor(), 0)
	if err != nil {
		log.Fatal(err)
	}
	defer tgt.Unimport() // unmaps what Map mapped

	m, err := tgt.Map(context.Background(), segment.Read|segment.Write)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Unmap()
	b, err := m.Bytes()
	if err != nil {
		log.Fatal(err)
	}
	copy(b, "stored by the importer")
	fmt.Println("owner sees:", string(seg.Bytes()[:22]))

	ro, err := tgt.Map(context.Background(), segment.Read)
	if err != nil {
		log.Fatal(err)
	}
	defer ro.Unmap()
	_, err = ro.Bytes()
	fmt.Println("read-only slice refused:", urma.StatusOf(err) == urma.StatusPermission)
	buf := make([]byte, 6)
	if _, err := ro.ReadAt(buf, 0); err != nil {
		log.Fatal(err)
	}
	fmt.Println("read-only reads:", string(buf))
	// Output:
	// device maps imports: true
	// owner sees: stored by the importer
	// read-only slice refused: true
	// read-only reads: stored
}
