package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/view"
)

// client issues requests. Payloads larger than inlineMax move through two
// views over the same memory, a payload buffer and a metadata buffer: the
// write view lays them out as the server's chunks ([4048 data | ID and
// reserved]) and inserts each chunk's CRC32 on the wire; the read view
// takes the server's chunks apart again, checking each CRC.
type client struct {
	*end
	payload, meta    *segment.Segment
	wview, rview     *view.View
	stats            clientStats
	corruptNextWrite bool
	scratch          *segment.Segment
}

type clientStats struct {
	writes, reads, inline, rdma, bytes uint64
}

const maxChunks = (maxPayload + chunkData - 1) / chunkData

// statusError is a refused request.
type statusError struct {
	op     string
	id     uint64
	status byte
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s of id %d: %s", e.op, e.id, statusName(e.status))
}

func newClient(e *end) (*client, error) {
	c := &client{end: e}
	var err error
	if c.payload, err = segment.Alloc(e.ctx, maxChunks*chunkData, segment.Config{Access: segment.LocalOnly}); err != nil {
		return c, err
	}
	if c.meta, err = segment.Alloc(e.ctx, maxChunks*metaWire, segment.Config{Access: segment.LocalOnly}); err != nil {
		return c, err
	}
	// Configured at the largest size once, so that each view's bounce
	// segment, and so its descriptor, stays the same for every request.
	if c.wview, err = view.New(e.ctx, c.viewConfig(maxChunks, segment.Read)); err != nil {
		return c, err
	}
	c.rview, err = view.New(e.ctx, c.viewConfig(maxChunks, segment.Read|segment.Write))
	return c, err
}

// viewConfig lays out n chunks: the payload's 4048-byte pieces interleaved
// with the metadata's 44-byte ones, plain in memory, with a CRC32 per
// chunk on the wire.
func (c *client) viewConfig(n int, access segment.Access) view.Config {
	return view.Config{
		Layout: view.Layout{Repeat: n, Entries: []view.LayoutEntry{
			{Mem: c.payload, Bytes: chunkData}, {Mem: c.meta, Bytes: metaWire}}},
		Wire: chunkSig, Access: access, TokenPolicy: segment.TokenPlainText, Token: c.token,
	}
}

func (c *client) close() error {
	if c == nil || c.end == nil {
		return nil
	}
	return joinErr(c.wview.Close(), c.rview.Close(), c.scratch.Close(), c.payload.Close(), c.meta.Close(), c.end.close())
}

// roundTrip sends the request built in the send buffer and returns the
// response.
func (c *client) roundTrip(ctx context.Context, n int, id uint64) (status byte, payload []byte, err error) {
	if err := c.sendMsg(ctx, n); err != nil {
		return 0, nil, err
	}
	m, err := c.recvMsg(ctx, waitLimit)
	if err != nil {
		return 0, nil, err
	}
	rid, status, payload, err := decodeResponse(m)
	if err != nil {
		return 0, nil, err
	}
	if rid != id {
		return 0, nil, fmt.Errorf("response for id %d to request %d", rid, id)
	}
	return status, payload, nil
}

// write stores data under id.
func (c *client) write(ctx context.Context, id uint64, data []byte) error {
	if len(data) == 0 || len(data) > maxPayload {
		return fmt.Errorf("payload of %d bytes: want 1 to %d", len(data), maxPayload)
	}
	h := header{id: id, size: uint16(len(data)), typ: typeWrite}
	body := data
	if !h.inline() {
		var err error
		if body, err = c.stage(id, data); err != nil {
			return err
		}
	}
	n := encodeRequest(c.sendBuf(), h, body)
	status, _, err := c.roundTrip(ctx, n, id)
	if err != nil {
		return err
	}
	c.count(true, h.inline(), len(data))
	if status != statusOK {
		return &statusError{"write", id, status}
	}
	return nil
}

// stage puts data and its chunks' metadata behind the write view and
// returns the view's descriptor for the request: Expose publishes the
// wire form, CRCs inserted, for the server to READ.
func (c *client) stage(id uint64, data []byte) ([]byte, error) {
	n := chunksFor(len(data))
	p := c.payload.Bytes()[:n*chunkData]
	clear(p[copy(p, data):])
	for i := range n {
		putMeta(c.meta.Bytes()[i*metaWire:], id)
	}
	if c.corruptNextWrite {
		c.corruptNextWrite = false
		return c.stageCorrupted(n)
	}
	if err := c.wview.Configure(c.viewConfig(n, segment.Read)); err != nil {
		return nil, err
	}
	d, err := c.wview.Expose()
	if err != nil {
		return nil, err
	}
	return d.MarshalBinary()
}

// stageCorrupted builds the wire form by hand in a plain segment, with one
// bit of the last chunk's data flipped after its CRC was computed: what
// the server sees when data goes bad between the client's memory and its
// own. It backs the -corrupt test knob.
func (c *client) stageCorrupted(n int) ([]byte, error) {
	if c.scratch == nil {
		var err error
		if c.scratch, err = segment.Alloc(c.ctx, maxChunks*chunkSize, segment.Config{Access: segment.Read,
			TokenPolicy: segment.TokenPlainText, Token: c.token}); err != nil {
			return nil, err
		}
	}
	var plain [view.BlockChunk]byte
	for i := range n {
		copy(plain[:], c.payload.Bytes()[i*chunkData:(i+1)*chunkData])
		copy(plain[chunkData:], c.meta.Bytes()[i*metaWire:(i+1)*metaWire])
		if err := chunkSig.Insert(c.scratch.Bytes()[i*chunkSize:(i+1)*chunkSize], plain[:]); err != nil {
			return nil, err
		}
	}
	c.scratch.Bytes()[(n-1)*chunkSize+7] ^= 0x10
	return c.scratch.Descriptor().MarshalBinary()
}

// read returns the size bytes stored under id.
func (c *client) read(ctx context.Context, id uint64, size int) ([]byte, error) {
	if size <= 0 || size > maxPayload {
		return nil, fmt.Errorf("read of %d bytes: want 1 to %d", size, maxPayload)
	}
	h := header{id: id, size: uint16(size), typ: typeRead}
	var body []byte
	n := chunksFor(size)
	if !h.inline() {
		if err := c.rview.Configure(c.viewConfig(n, segment.Read|segment.Write)); err != nil {
			return nil, err
		}
		d, err := c.rview.Expose()
		if err != nil {
			return nil, err
		}
		if body, err = d.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	status, payload, err := c.roundTrip(ctx, encodeRequest(c.sendBuf(), h, body), id)
	if err != nil {
		return nil, err
	}
	c.count(false, h.inline(), size)
	if status != statusOK {
		return nil, &statusError{"read", id, status}
	}
	if h.inline() {
		if len(payload) != size {
			return nil, fmt.Errorf("inline read of id %d brought %d bytes, want %d", id, len(payload), size)
		}
		return payload, nil
	}
	// The server WROTE the chunks into the view: Check takes them apart,
	// checking each CRC, into the payload and metadata buffers.
	if err := c.rview.Check(); err != nil {
		return nil, fmt.Errorf("read of id %d: %w", id, err)
	}
	for i := range n {
		if got := binary.BigEndian.Uint64(c.meta.Bytes()[i*metaWire:]); got != id {
			return nil, fmt.Errorf("read of id %d: chunk %d belongs to id %d", id, i, got)
		}
	}
	return append([]byte{}, c.payload.Bytes()[:size]...), nil
}

func (c *client) count(write, inline bool, n int) {
	if write {
		c.stats.writes++
	} else {
		c.stats.reads++
	}
	if inline {
		c.stats.inline++
	} else {
		c.stats.rdma++
	}
	c.stats.bytes += uint64(n)
}

// checksum is how the load generator remembers what it wrote.
func checksum(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
