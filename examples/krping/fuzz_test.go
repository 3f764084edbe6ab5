package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseAd: advertisements arrive in receive buffers from the peer,
// which may be a real krping or rping. Every 16 bytes are an
// advertisement (all field values are legal), nothing else is.
func FuzzParseAd(f *testing.F) {
	b := make([]byte, adSize)
	ad{buf: 0x7f0000001000, rkey: 0xdeadbeef, size: 64}.marshal(b)
	f.Add(b)
	f.Add(b[:adSize-1])
	f.Add(append(b, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseAd(b)
		require.Equal(t, len(b) == adSize, err == nil, "%d bytes: %v", len(b), err)
		if err != nil {
			return
		}
		again := make([]byte, adSize)
		a.marshal(again)
		require.Equal(t, b, again)
	})
}

// FuzzParseTest: the client's test, sent ahead of its bundle. A server
// follows the test, count and size it names, so they must be in range, and
// what is accepted must be exactly what marshalTest makes of the decoded
// values.
func FuzzParseTest(f *testing.F) {
	for _, test := range testCodes {
		f.Add(marshalTest(test, 100, 64))
	}
	b := marshalTest("ping", 0, maxSize+1)
	f.Add(b)
	f.Add(b[:testSize-1])
	f.Add(make([]byte, testSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		test, count, size, err := parseTest(b)
		if err != nil {
			return
		}
		require.Contains(t, testCodes, test)
		require.GreaterOrEqual(t, count, 0)
		require.True(t, size >= 1 && size <= maxSize, "size %d", size)
		require.Equal(t, b, marshalTest(test, count, size))
	})
}

// formatOptions writes o as an option string that sets every field.
func formatOptions(o options) string {
	fields := []string{
		"addr=" + o.addr,
		fmt.Sprintf("port=%d", o.port),
		fmt.Sprintf("count=%d", o.count),
		fmt.Sprintf("size=%d", o.size),
		fmt.Sprintf("txdepth=%d", o.txdepth),
	}
	for name, set := range map[string]bool{"server": o.server, "client": o.client, "verbose": o.verbose,
		"validate": o.validate, "wlat": o.wlat, "rlat": o.rlat, "bw": o.bw, "duplex": o.duplex, "poll": o.poll,
		"rping": o.rping} {
		if set {
			fields = append(fields, name)
		}
	}
	return strings.Join(fields, ",")
}

// FuzzParseOptions: the option string comes from the command line. Whatever
// parseOptions accepts must be consistent (one role, one test, numbers in
// range) and must read back the same when written out in full.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{
		"server,addr=127.0.0.1,port=9999,count=100,size=64,validate,verbose",
		"client,addr=169.254.77.1,port=7000,rlat,poll,txdepth=8, size=4096",
		"client,rping,addr=169.254.77.1,count=5",
		"bw,duplex",
		"",
		",,, ,",
		"server,client",
		"wlat,rlat",
		"duplex",
		"port=0",
		"size=131073",
		"count=-1",
		"addr=",
		"addr= x=y",
		"verbose=1",
		"port",
		"bogus",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := parseOptions(s)
		if err != nil {
			return
		}
		require.False(t, o.server && o.client)
		require.LessOrEqual(t, btoi(o.wlat)+btoi(o.rlat)+btoi(o.bw), 1)
		require.True(t, !o.duplex || o.bw)
		require.True(t, !o.rping || o.test() == "ping")
		require.True(t, o.port >= 1 && o.port <= 65535, "port %d", o.port)
		require.True(t, o.size >= 1 && o.size <= maxSize, "size %d", o.size)
		require.True(t, o.txdepth >= 1 && o.txdepth <= 4096, "txdepth %d", o.txdepth)
		require.GreaterOrEqual(t, o.count, 0)
		require.NotEmpty(t, o.addr)

		again, err := parseOptions(formatOptions(o))
		require.NoError(t, err, "%q, written out as %q", s, formatOptions(o))
		require.Equal(t, o, again)
	})
}
