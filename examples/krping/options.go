package main

import (
	"fmt"
	"strconv"
	"strings"
)

// maxSize is krping's RPING_BUFSIZE: the largest ping.
const maxSize = 128 << 10

// options is krping's option string: comma-separated keywords and
// key=value pairs, e.g. "server,addr=127.0.0.1,port=9999,count=100".
type options struct {
	server, client bool
	addr           string
	port           int
	count          int // 0 runs until interrupted
	size           int
	verbose        bool
	validate       bool
	wlat, rlat, bw bool
	duplex         bool
	txdepth        int
	poll           bool
	// rping talks to rdma-core's rping instead of krping: plain rdma_cm
	// on addr:port, no out-of-band channel, the ping test only.
	rping bool
}

// defaultPort is used when the string has no port=; krping's examples use
// 9999. rpingPort is rping's own default.
const (
	defaultPort = 9999
	rpingPort   = 7174
)

// parseOptions parses s. Unknown keys, bad numbers and contradictions are
// errors that name the option.
func parseOptions(s string) (options, error) {
	o := options{addr: "127.0.0.1", port: defaultPort, size: 64, txdepth: 64}
	portGiven := false
	namedTest := "" // test=NAME's test, checked against the keywords below
	for _, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		key, val, hasVal := strings.Cut(field, "=")
		flag := func(p *bool) error {
			if hasVal {
				return fmt.Errorf("option %q takes no value", key)
			}
			*p = true
			return nil
		}
		num := func(p *int, lo, hi int) error {
			if !hasVal {
				return fmt.Errorf("option %q needs a value (%s=N)", key, key)
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < lo || n > hi {
				return fmt.Errorf("option %s=%s: want an integer from %d to %d", key, val, lo, hi)
			}
			*p = n
			return nil
		}
		var err error
		switch key {
		case "server":
			err = flag(&o.server)
		case "client":
			err = flag(&o.client)
		case "addr":
			if !hasVal || val == "" {
				err = fmt.Errorf("option addr needs a value (addr=IP)")
			}
			o.addr = val
		case "port":
			err = num(&o.port, 1, 65535)
			portGiven = true
		case "count":
			err = num(&o.count, 0, 1<<31-1)
		case "size":
			err = num(&o.size, 1, maxSize)
		case "verbose":
			err = flag(&o.verbose)
		case "validate":
			err = flag(&o.validate)
		case "wlat":
			err = flag(&o.wlat)
		case "rlat":
			err = flag(&o.rlat)
		case "bw":
			err = flag(&o.bw)
		case "duplex":
			err = flag(&o.duplex)
		case "txdepth":
			err = num(&o.txdepth, 1, 4096)
		case "poll":
			err = flag(&o.poll)
		case "rping":
			err = flag(&o.rping)
		case "test":
			// krping's own spelling of the test (test=rping is its
			// ping loop, as "rping" names it), next to the keywords.
			switch val {
			case "rping", "ping":
				namedTest = "ping"
			case "wlat", "rlat", "bw":
				namedTest = val
			default:
				err = fmt.Errorf("option test=%s: want rping (or ping), wlat, rlat or bw", val)
			}
		default:
			err = fmt.Errorf("unknown option %q (known: server client addr port count size verbose validate wlat rlat bw duplex txdepth poll rping test)", key)
		}
		if err != nil {
			return o, err
		}
	}
	switch namedTest {
	case "wlat":
		o.wlat = true
	case "rlat":
		o.rlat = true
	case "bw":
		o.bw = true
	case "ping":
		if o.wlat || o.rlat || o.bw {
			return o, fmt.Errorf("pick only one test: test=rping is the ping test, not %s", o.test())
		}
	}
	switch {
	case o.server && o.client:
		return o, fmt.Errorf("options server and client exclude each other (neither runs both in one process)")
	case btoi(o.wlat)+btoi(o.rlat)+btoi(o.bw) > 1:
		return o, fmt.Errorf("pick only one test: wlat, rlat or bw")
	case o.wlat && o.size < 4:
		return o, fmt.Errorf("wlat needs size=4 or more (each end writes a 4-byte iteration number), not size=%d", o.size)
	case o.duplex && !o.bw:
		return o, fmt.Errorf("duplex goes with bw")
	case o.rping && o.test() != "ping":
		return o, fmt.Errorf("rping runs the ping test only, not %s", o.test())
	}
	if o.rping && !portGiven {
		o.port = rpingPort
	}
	return o, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// test names the loop the options select.
func (o options) test() string {
	switch {
	case o.wlat:
		return "wlat"
	case o.rlat:
		return "rlat"
	case o.bw && o.duplex:
		return "bw duplex"
	case o.bw:
		return "bw"
	}
	return "ping"
}
