package perf

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/urma"
)

// FuzzHello: the server takes its whole configuration from the client's
// hello, a JSON value read off the network. What it accepts must pass the
// same checks as a command line, and must be exactly the hello a client
// sends for that configuration: no field may be read as something other
// than what the client wrote.
func FuzzHello(f *testing.F) {
	info := endpointInfo{Queue: []byte{1, 2, 3}, Seg: []byte{4}, Token: 7}
	for _, cfg := range []Config{
		{Test: Test{Op: Write}},
		{Test: Test{Op: Send, BW: true}, Mode: urma.UM, Event: true, Spin: time.Microsecond},
		{Test: Test{Op: Atomic}, CAS: true, Mode: urma.RM},
		{Test: Test{Op: Read, BW: true}, Sizes: AllSizes(MaxSize), Duration: time.Second, Inline: -1},
		{Test: Test{Op: Send}, Tuned: true},
		{Test: Test{Op: Write, BW: true}, LockFree: true},
	} {
		b, err := json.Marshal(helloFor(cfg.Defaults(), info))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"Version":1,"Test":"send_lat","Sizes":[0],"Iters":1,"TxDepth":1,"RxDepth":1,"PostList":1,"CQMod":1}`))
	f.Add([]byte(`{"Version":2}`))
	f.Add([]byte(`{"Version":1,"Test":"write_lat","Iters":16777217}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h hello
		if err := json.NewDecoder(bytes.NewReader(b)).Decode(&h); err != nil {
			return
		}
		cfg, err := h.config()
		if err != nil {
			return
		}
		require.NoError(t, cfg.Validate())
		for _, s := range cfg.Sizes {
			require.True(t, s >= 1 && s <= MaxSize, "size %d", s)
		}
		require.True(t, cfg.Iters >= 1 && cfg.Iters <= maxSamples, "iters %d", cfg.Iters)
		require.Equal(t, h, helloFor(cfg, h.endpointInfo), "the hello for the config the server read")

		// And once more over the wire, as the client would send it.
		var wire bytes.Buffer
		require.NoError(t, json.NewEncoder(&wire).Encode(helloFor(cfg, h.endpointInfo)))
		var h2 hello
		require.NoError(t, json.NewDecoder(&wire).Decode(&h2))
		cfg2, err := h2.config()
		require.NoError(t, err)
		require.Equal(t, cfg, cfg2)
		require.Equal(t, h.endpointInfo, h2.endpointInfo)
	})
}
