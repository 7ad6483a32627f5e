package discord

import "encoding/binary"

// closeSniffer reads the bytes a gateway socket receives (the HTTP upgrade answer, then
// WebSocket frames) without consuming them, and reports the status code of a Close frame the
// server sends. discordgo reconnects on any read error without telling its caller why; the code
// (4000-4014 for the gateway) says whether the session could resume.
//
// Frame layout, RFC 6455 §5.2 (https://www.rfc-editor.org/rfc/rfc6455#section-5.2):
//
//	 0               1               2               3
//	+-+-+-+-+-------+-+-------------+-------------------------------+
//	|F|R|R|R| opcode|M| Payload len |    Extended payload length    |
//	|I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
//	|N|V|V|V|       |S|             |   (if payload len==126/127)   |
//	+-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
//	|     Masking-key (0 or 4 bytes, if MASK)      |  Payload data  |
//
// A Close frame's payload starts with a 2-byte status code (§5.5.1).
type closeSniffer struct {
	onClose func(code int)

	head    httpHead // the HTTP answer's header, before the frames
	hdr     []byte   // the frame header read so far
	skip    uint64   // payload bytes of the current frame still to pass
	closing bool     // the current frame is a Close: collect its first two bytes
	code    []byte
	mask    [4]byte
	masked  bool
	broken  bool // the stream made no sense: stop looking
}

const opClose = 8

// feed takes the next bytes received.
func (c *closeSniffer) feed(p []byte) {
	for p = c.head.skip(p); len(p) > 0 && !c.broken; {
		if c.skip > 0 {
			n := uint64(len(p))
			if n > c.skip {
				n = c.skip
			}
			if c.closing {
				for i := uint64(0); i < n && len(c.code) < 2; i++ {
					b := p[i]
					if c.masked {
						b ^= c.mask[len(c.code)%4]
					}
					c.code = append(c.code, b)
				}
				if len(c.code) == 2 {
					c.onClose(int(binary.BigEndian.Uint16(c.code)))
					c.closing = false
				}
			}
			c.skip -= n
			p = p[n:]
			continue
		}
		c.hdr = append(c.hdr, p[0])
		p = p[1:]
		c.header()
	}
}

// httpHead passes over the HTTP header that opens a WebSocket stream, up to its blank line.
type httpHead struct {
	done bool
	tail uint32 // the last four bytes seen, to find "\r\n\r\n"
}

// skip returns what follows the header in p, the next bytes of the stream (nothing while the
// header goes on).
func (h *httpHead) skip(p []byte) []byte {
	for len(p) > 0 && !h.done {
		h.tail = h.tail<<8 | uint32(p[0])
		p = p[1:]
		h.done = h.tail == 0x0d0a0d0a
	}
	return p
}

// header decodes c.hdr once it is complete and starts the frame's payload.
func (c *closeSniffer) header() {
	if len(c.hdr) < 2 {
		return
	}
	need := 2
	switch c.hdr[1] & 0x7f {
	case 126:
		need += 2
	case 127:
		need += 8
	}
	masked := c.hdr[1]&0x80 != 0
	if masked {
		need += 4
	}
	if len(c.hdr) < need {
		return
	}
	var length uint64
	switch n := c.hdr[1] & 0x7f; n {
	case 126:
		length = uint64(binary.BigEndian.Uint16(c.hdr[2:4]))
	case 127:
		length = binary.BigEndian.Uint64(c.hdr[2:10])
	default:
		length = uint64(n)
	}
	c.masked = masked
	if masked {
		copy(c.mask[:], c.hdr[need-4:need])
	}
	opcode := c.hdr[0] & 0x0f
	if opcode >= 8 && length > 125 {
		c.broken = true // control frames are at most 125 bytes
		return
	}
	c.closing = opcode == opClose && length >= 2
	c.code = c.code[:0]
	c.skip = length
	c.hdr = c.hdr[:0]
}
