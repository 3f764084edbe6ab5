package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseOptions(t *testing.T) {
	o, err := parseOptions("server,addr=127.0.0.1,port=9999,count=100,size=64,validate,verbose")
	require.NoError(t, err)
	assert.Equal(t, options{server: true, addr: "127.0.0.1", port: 9999, count: 100, size: 64, validate: true,
		verbose: true, txdepth: 64}, o)
	assert.Equal(t, "ping", o.test())

	o, err = parseOptions("client,addr=169.254.77.1,port=7000,rlat,poll,txdepth=8, size=4096")
	require.NoError(t, err)
	assert.True(t, o.client && o.rlat && o.poll)
	assert.Equal(t, []any{"169.254.77.1", 7000, 8, 4096, "rlat"}, []any{o.addr, o.port, o.txdepth, o.size, o.test()})

	o, err = parseOptions("")
	require.NoError(t, err)
	assert.Equal(t, options{addr: "127.0.0.1", port: defaultPort, size: 64, txdepth: 64}, o)
	o, err = parseOptions("client,rping,addr=169.254.77.1,count=5")
	require.NoError(t, err)
	assert.Equal(t, []any{true, rpingPort, "ping"}, []any{o.rping, o.port, o.test()})
	o, err = parseOptions("rping,port=7000")
	require.NoError(t, err)
	assert.Equal(t, 7000, o.port)
	o, err = parseOptions("bw,duplex")
	require.NoError(t, err)
	assert.Equal(t, "bw duplex", o.test())

	// krping's own spelling: test=rping is the ping test (not the rping
	// keyword, which talks to rdma-core's rping), test=wlat the keyword.
	o, err = parseOptions("server,test=rping,addr=192.168.69.127,port=9999")
	require.NoError(t, err)
	assert.Equal(t, []any{"ping", false, 9999}, []any{o.test(), o.rping, o.port})
	for s, want := range map[string]string{"test=ping": "ping", "test=wlat": "wlat", "test=rlat,rlat": "rlat", "test=bw,duplex": "bw duplex"} {
		o, err = parseOptions(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, o.test(), s)
	}

	for s, want := range map[string]string{
		"test=fast":        "test=fast: want rping (or ping), wlat, rlat or bw",
		"test=rping,bw":    "test=rping is the ping test, not bw",
		"test=wlat,rlat":   "pick only one test",
		"test":             "test=: want rping",
		"server,client":    "exclude each other",
		"bogus":            `unknown option "bogus"`,
		"size=0":           "size=0: want an integer from 1 to 131072",
		"size=131073":      "from 1 to 131072",
		"size":             `option "size" needs a value`,
		"count=-1":         "count=-1",
		"port=x":           "port=x",
		"port=70000":       "port=70000",
		"validate=1":       `option "validate" takes no value`,
		"wlat,rlat":        "pick only one test",
		"duplex":           "duplex goes with bw",
		"addr=":            "addr needs a value",
		"txdepth=0":        "txdepth=0",
		"server,,port=1,=": `unknown option ""`,
		"rping,wlat":       "rping runs the ping test only, not wlat",
		"rping=1":          `option "rping" takes no value`,
		"wlat,size=3":      "wlat needs size=4 or more",
		"size=1,wlat":      "not size=1",
	} {
		_, err := parseOptions(s)
		assert.ErrorContains(t, err, want, "%q", s)
	}
}

func TestAd(t *testing.T) {
	b := make([]byte, adSize)
	a := ad{buf: 0x0102030405060708, rkey: 0x0a0b0c0d, size: 65536}
	a.marshal(b)
	assert.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8, 0xa, 0xb, 0xc, 0xd, 0, 1, 0, 0}, b)
	got, err := parseAd(b)
	require.NoError(t, err)
	assert.Equal(t, a, got)
	for _, n := range []int{0, 15, 17, 64} {
		_, err := parseAd(make([]byte, n))
		assert.ErrorContains(t, err, "bogus data")
	}
}

func TestPattern(t *testing.T) {
	b := make([]byte, 20)
	next := fillPing(b, 7, 'y')
	assert.Equal(t, "rdma-ping-7: yzABCD\x00", string(b))
	assert.Equal(t, byte('z'), next)
	assert.Equal(t, byte('A'), fillPing(b, 8, 'z'))
	assert.Equal(t, 19, cstrlen(b))

	one := make([]byte, 1)
	fillPing(one, 123, 'A') // krping allows size 1: only the terminator fits
	assert.Equal(t, []byte{0}, one)

	sent := bytes.Repeat([]byte("x"), 64)
	got := append([]byte{}, sent...)
	assert.NoError(t, validate(sent, got))
	got[40] = 'y'
	assert.ErrorContains(t, validate(sent, got), "data mismatch at byte 40 of 64")
}
