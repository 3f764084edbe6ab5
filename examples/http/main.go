// Command http serves net/http over URMA: the server's http.Server serves
// a urmanet Listener, the client's http.Transport dials with urmanet, and
// nothing else changes. The client GETs a greeting and POSTs a body whose
// length and SHA-256 the server sends back. Both sides run in one process
// unless -server or -client is given.
//
//	go run ./examples/http
//	go run ./examples/http -server -addr :7480     # terminal 1
//	go run ./examples/http -client -addr :7480     # terminal 2
//	go run -tags urma_verbs ./examples/http -provider ib -dev rxe0
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/urma-go/sdk/examples/internal/exutil"
	"github.com/urma-go/sdk/urma"
)

// config is the command line.
type config struct {
	exutil.Net
	size int // bytes the client POSTs
}

func main() {
	var cfg config
	fs := flag.NewFlagSet("http", flag.ExitOnError)
	cfg.Register(fs, 7480)
	fs.IntVar(&cfg.size, "size", 1<<20, "bytes the client POSTs")
	_ = fs.Parse(os.Args[1:])
	if err := cfg.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "http:", err)
		os.Exit(2)
	}
	ctx, stop := exutil.Interruptible()
	defer stop()
	err := run(ctx, os.Stdout, cfg)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Println("http: interrupted")
		stop()
		os.Exit(exutil.ExitInterrupted)
	case err != nil:
		fmt.Fprintln(os.Stderr, "http:", err)
		os.Exit(1)
	}
}

func (c config) validate() error {
	if c.size < 0 {
		return fmt.Errorf("-size %d: want 0 or more", c.size)
	}
	return c.Validate()
}

// run runs the server, the client or both, as cfg says.
func run(ctx context.Context, w io.Writer, cfg config) error {
	w = exutil.LockedWriter(w)
	switch {
	case cfg.Server:
		return runServer(ctx, w, cfg)
	case cfg.Client:
		addr, err := cfg.Target()
		if err != nil {
			return err
		}
		return runClient(ctx, w, cfg, addr)
	}
	srv, err := cfg.Open(false)
	if err != nil {
		return err
	}
	defer srv.Close()
	l, err := cfg.Listen(srv)
	if err != nil {
		return err
	}
	s := newServer(w, srv, l)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	err = runClient(ctx, w, cfg, l.Addr().String())
	// Shutdown closes the listener and waits for the handlers.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(err, s.Shutdown(sctx), ignoreClosed(<-served))
}

// runServer serves until ctx is done.
func runServer(ctx context.Context, w io.Writer, cfg config) error {
	uctx, err := cfg.Open(false)
	if err != nil {
		return err
	}
	defer uctx.Close()
	l, err := cfg.Listen(uctx)
	if err != nil {
		return err
	}
	s := newServer(w, uctx, l)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(ctx.Err(), s.Shutdown(sctx), ignoreClosed(<-served))
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// newServer is an ordinary http.Server: GET /hello greets, POST /sum
// answers with the body's length and SHA-256.
func newServer(w io.Writer, uctx *urma.Context, l net.Listener) *http.Server {
	fmt.Fprintf(w, "server: %v, listening on %v\n", uctx.Device(), l.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(rw, "hello over %s from %s", l.Addr().Network(), r.RemoteAddr)
	})
	mux.HandleFunc("POST /sum", func(rw http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(rw, "%d bytes, sha256 %x", n, h.Sum(nil))
	})
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}

// runClient GETs /hello and POSTs cfg.size bytes to /sum at addr. The
// URL's host is the urmanet address, which the transport hands to its
// dialer.
func runClient(ctx context.Context, w io.Writer, cfg config, addr string) error {
	uctx, err := cfg.Open(true)
	if err != nil {
		return err
	}
	defer uctx.Close()
	dial := cfg.Dialer(uctx)
	tr := &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		return dial(ctx, addr)
	}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	base := "http://" + addr
	fmt.Fprintf(w, "client: %v, eid %v, dialling %s\n", uctx.Device(), uctx.EID(), addr)

	body, status, err := do(ctx, client, http.MethodGet, base+"/hello", nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "client: GET /hello: %s %q\n", status, body)

	payload := make([]byte, cfg.size)
	for i := range payload {
		payload[i] = byte(i*7 + 1)
	}
	body, status, err = do(ctx, client, http.MethodPost, base+"/sum", payload)
	if err != nil {
		return err
	}
	want := fmt.Sprintf("%d bytes, sha256 %x", len(payload), sha256.Sum256(payload))
	if body != want {
		return fmt.Errorf("POST /sum: the server answered %q, want %q", body, want)
	}
	fmt.Fprintf(w, "client: POST /sum (%d bytes): %s %q, matches\n", len(payload), status, body)
	return nil
}

// do makes one request and returns the response's body and status; a
// status other than 200 is an error.
func do(ctx context.Context, c *http.Client, method, url string, body []byte) (string, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return "", "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", "", fmt.Errorf("%s %s: %w", method, url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("%s %s: %s %q", method, url, resp.Status, b)
	}
	return string(b), resp.Status, nil
}
