package urma_test

import (
	"fmt"
	"log"

	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
)

// List every device of every registered provider with its EID table.
func ExampleDevices() {
	devs, err := urma.Devices()
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range devs {
		a := d.Attr()
		fmt.Printf("%s provider=%s transport=%s ports=%d\n", d.Name(), d.Provider(), a.Transport, len(a.Ports))
		for i, eid := range d.EIDs() {
			fmt.Printf("  eid[%d] %v\n", i, eid)
		}
	}
	// Output:
	// loopback0 provider=loopback transport=loopback ports=1
	//   eid[0] ::ffff:127.0.0.1
	//   eid[1] ::ffff:127.0.0.2
	//   eid[2] ::ffff:127.0.0.3
	//   eid[3] ::ffff:127.0.0.4
}

// Open a context on the first EID of a device found by name, then find the
// same device again by that EID.
func ExampleOpen() {
	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, err := urma.Open(dev, 0, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	fmt.Println("device:", ctx.Device())
	fmt.Println("eid:", ctx.EID())

	again, err := urma.DeviceByEID(ctx.EID())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("by eid:", again.Name(), "index", again.EIDIndex(ctx.EID()))
	// Output:
	// device: loopback/loopback0
	// eid: ::ffff:127.0.0.1
	// by eid: loopback0 index 0
}

// An unknown provider name says what is probably missing.
func ExampleProviderDevices() {
	_, err := urma.ProviderDevices("ib")
	fmt.Println(err)
	// Output:
	// urma: open provider: unknown provider "ib" (forgotten import?): not found
}
