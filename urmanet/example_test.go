package urmanet_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"

	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
	"github.com/urma-go/sdk/urmanet"
)

// net/http over URMA: the server serves a urmanet Listener, the client's
// transport dials with urmanet; nothing else changes.
func Example_http() {
	dev, err := urma.DeviceByName("loopback0")
	if err != nil {
		log.Fatal(err)
	}
	server, err := urma.Open(dev, 0, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer server.Close()
	client, err := urma.Open(dev, 1, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	l, err := urmanet.Listen(server, ":8080")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello over %s", l.Addr().Network())
	})}
	go srv.Serve(l)
	defer srv.Close()

	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return urmanet.Dial(ctx, client, l.Addr().String())
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://urma/")
	if err != nil {
		log.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, string(body))
	// Output:
	// 200 OK hello over urma
}
