package discord

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"

	"github.com/gorilla/websocket"
)

// identifyPermits makes every Identify a shard's session sends wait for the identify gate, not
// only the first one. discordgo identifies on its own after op 9 Invalid Session (on the same
// socket, at once) and after a refused resume, and offers no hook to wait first. Its gateway
// connections are ours, though (Session.Dialer), so the permits see the frames the session
// writes: an Identify (op 2) frame waits in Write until the gate lets the shard's rate-limit key
// identify, then goes out. The permit is released (and the key's next identify booked) when the
// session's READY arrives — by then Discord has taken the Identify, so the next one of the key
// reaches it a full spacing later — or when the session identifies again (op 9 answered the
// last), or when the connection closes.
//
// Shards.Open takes the first permit itself, before discordgo's Open, so that shards of a key
// log in one after the other; the Identify that Open then sends spends it without waiting.
type identifyPermits struct {
	gate IdentifyGate
	key  int
	life context.Context // ends when the shards close: a waiting Identify gives up

	mu      sync.Mutex // guards following
	release func()     // the permit held, nil when none
	unspent bool       // taken by Open, no Identify sent with it yet
	holder  net.Conn   // the connection whose Identify holds the permit (nil: Open's)
}

// hold takes a permit acquired by Open for the session's next Identify.
func (p *identifyPermits) hold(release func()) {
	p.mu.Lock()
	old := p.release
	p.release, p.unspent, p.holder = release, true, nil
	p.mu.Unlock()
	if old != nil {
		old()
	}
}

// done releases the permit held, if any: READY came, Open failed.
func (p *identifyPermits) done() {
	p.mu.Lock()
	release := p.release
	p.release, p.unspent, p.holder = nil, false, nil
	p.mu.Unlock()
	if release != nil {
		release()
	}
}

// closed releases the permit if c's Identify holds it: the connection ended before READY.
func (p *identifyPermits) closed(c net.Conn) {
	p.mu.Lock()
	release := p.release
	if p.holder != c || release == nil {
		p.mu.Unlock()
		return
	}
	p.release, p.unspent, p.holder = nil, false, nil
	p.mu.Unlock()
	release()
}

// identify is called before an Identify goes out on c: it spends Open's permit, or releases the
// previous Identify's and waits for a new one. ctx ends when c closes.
func (p *identifyPermits) identify(ctx context.Context, c net.Conn) error {
	p.mu.Lock()
	if p.release != nil && p.unspent {
		p.unspent, p.holder = false, c
		p.mu.Unlock()
		return nil
	}
	old := p.release
	p.release, p.holder = nil, nil
	p.mu.Unlock()
	if old != nil {
		old() // Discord answered the last Identify (op 9): its spacing starts now
	}
	release, err := p.gate.Acquire(ctx, p.key)
	if err != nil {
		return fmt.Errorf("discord: wait to identify (key %d): %w", p.key, err)
	}
	p.mu.Lock()
	p.release, p.unspent, p.holder = release, false, c
	p.mu.Unlock()
	return nil
}

// dialer returns base with every connection's Identify frames gated.
func (p *identifyPermits) dialer(base *websocket.Dialer) *websocket.Dialer {
	return wrapDialer(base, func(c net.Conn) (net.Conn, error) {
		ctx, cancel := context.WithCancel(p.life)
		return &permitConn{Conn: c, p: p, ctx: ctx, cancel: cancel}, nil
	})
}

// permitConn holds the session's Identify frames until the gate allows them. Writes come from
// one goroutine at a time (the websocket writer's, under its lock), as net.Conn allows.
type permitConn struct {
	net.Conn
	p      *identifyPermits
	ctx    context.Context // ends at Close: a waiting Identify gives up
	cancel context.CancelFunc
	w      frameWatch
}

func (c *permitConn) Write(b []byte) (int, error) {
	if c.w.identifyStarts(b) {
		if err := c.p.identify(c.ctx, c); err != nil {
			return 0, err
		}
	}
	return c.Conn.Write(b)
}

func (c *permitConn) Close() error {
	c.cancel()
	c.p.closed(c)
	return c.Conn.Close()
}

// frameWatch follows the bytes a client writes on a gateway socket (the HTTP upgrade request,
// then masked WebSocket frames, RFC 6455 §5.2: see closeSniffer) and finds the frames that
// carry an Identify. gorilla/websocket writes a frame's header with the start of its payload in
// one Write; a payload is JSON, and discordgo's Identify (identifyOp) begins {"op":2,.
type frameWatch struct {
	head httpHead // the upgrade request, before the frames
	skip uint64   // bytes of the current frame still to come
}

// identifyPrefix is how an Identify payload starts.
var identifyPrefix = []byte(`{"op":2,`)

// identifyStarts reports whether b, the next bytes written, starts an Identify frame.
func (w *frameWatch) identifyStarts(b []byte) bool {
	found := false
	for b = w.head.skip(b); len(b) > 0; {
		if w.skip > 0 {
			n := min(uint64(len(b)), w.skip)
			w.skip -= n
			b = b[n:]
			continue
		}
		hdr, length, mask, ok := frameHeader(b)
		if !ok {
			return found // a header split across writes: gorilla does not, so stop looking
		}
		payload := b[hdr:]
		opcode := b[0] & 0x0f
		if opcode == websocket.TextMessage && length >= uint64(len(identifyPrefix)) && len(payload) >= len(identifyPrefix) {
			head := make([]byte, len(identifyPrefix))
			for i := range head {
				head[i] = payload[i] ^ mask[i%4]
			}
			found = found || bytes.Equal(head, identifyPrefix)
		}
		w.skip = uint64(hdr) + length
	}
	return found
}

// frameHeader decodes the header at the start of b: its size, the payload length and the mask.
func frameHeader(b []byte) (size int, length uint64, mask [4]byte, ok bool) {
	if len(b) < 2 {
		return 0, 0, mask, false
	}
	size = 2
	switch n := b[1] & 0x7f; n {
	case 126:
		size += 2
	case 127:
		size += 8
	}
	masked := b[1]&0x80 != 0
	if masked {
		size += 4
	}
	if len(b) < size {
		return 0, 0, mask, false
	}
	switch n := b[1] & 0x7f; n {
	case 126:
		length = uint64(binary.BigEndian.Uint16(b[2:4]))
	case 127:
		length = binary.BigEndian.Uint64(b[2:10])
	default:
		length = uint64(n)
	}
	if masked {
		copy(mask[:], b[size-4:size])
	}
	return size, length, mask, true
}
