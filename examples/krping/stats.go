package main

import "fmt"

// stats counts what one end moved, as krping's /proc/krping shows it.
type stats struct {
	sendBytes, sendMsgs   uint64
	recvBytes, recvMsgs   uint64
	writeBytes, writeMsgs uint64
	readBytes, readMsgs   uint64
}

// line is krping's stats line: "<n>-<dev> send_bytes send_msgs recv_bytes
// recv_msgs write_bytes write_msgs read_bytes read_msgs".
func (s stats) line(n int, dev string) string {
	return fmt.Sprintf("%d-%s %d %d %d %d %d %d %d %d", n, dev, s.sendBytes, s.sendMsgs, s.recvBytes, s.recvMsgs,
		s.writeBytes, s.writeMsgs, s.readBytes, s.readMsgs)
}
