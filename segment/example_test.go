package segment_test

import (
	"context"
	"fmt"
	"log"

	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// Allocate a segment, send its descriptor to a peer in its 48-byte wire form
// (with the token, out of band), and import it there.
func ExampleAlloc() {
	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		log.Fatal(err)
	}
	owner, err := urma.Open(dev, 0, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer owner.Close()
	peer, err := urma.Open(dev, 1, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer peer.Close()

	const token = 0x1234
	seg, err := segment.Alloc(owner, 1<<16, segment.Config{
		Access:      segment.Read | segment.Write,
		TokenPolicy: segment.TokenPlainText,
		Token:       token,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer seg.Unregister()

	wire, err := seg.Descriptor().MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("wire bytes:", len(wire), string(wire[:4]))

	var desc segment.Descriptor
	if err := desc.UnmarshalBinary(wire); err != nil {
		log.Fatal(err)
	}
	fmt.Println("eid:", desc.EID, "len:", desc.Len, "access:", desc.Access, "token:", desc.TokenPolicy)

	if _, err := segment.Import(context.Background(), peer, desc, 0x9999); err != nil {
		fmt.Println("wrong token:", urma.StatusOf(err) == urma.StatusPermission)
	}
	tgt, err := segment.Import(context.Background(), peer, desc, token)
	if err != nil {
		log.Fatal(err)
	}
	defer tgt.Unimport()
	fmt.Println("imported:", tgt.Len(), "bytes, same va:", tgt.Descriptor().VA == seg.VA())
	// Output:
	// wire bytes: 48 URSG
	// eid: ::ffff:127.0.0.1 len: 65536 access: READ|WRITE token: PLAIN_TEXT
	// wrong token: true
	// imported: 65536 bytes, same va: true
}

// Access rights follow URMA's registration rules.
func ExampleAccess() {
	for _, a := range []segment.Access{
		segment.LocalOnly,
		segment.Read | segment.Write | segment.Atomic,
		segment.Write,
		segment.LocalOnly | segment.Read,
	} {
		fmt.Printf("%-20v valid=%v\n", a, a.Validate() == nil)
	}
	// Output:
	// LOCAL_ONLY           valid=true
	// READ|WRITE|ATOMIC    valid=true
	// WRITE                valid=false
	// LOCAL_ONLY|READ      valid=false
}
