package voicesim

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/crypto/chacha20poly1305"
)

// msg is one server message as the raw test client saw it.
type msg struct {
	Op     Op
	D      json.RawMessage
	Seq    *int
	Binary bool
	Body   []byte
}

// rawClient is a minimal voice gateway client written from the docs, used
// to drive the server over the real wire.
type rawClient struct {
	t    testing.TB
	ws   *websocket.Conn
	last int // last seq seen (JSON seq or binary u16)
}

func dialRaw(t testing.TB, s *Server, query string) *rawClient {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CACertPEM()) {
		t.Fatal("bad CA PEM")
	}
	d := websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: pool}, HandshakeTimeout: 5 * time.Second}
	ws, _, err := d.Dial("wss://"+s.Endpoint()+"/"+query, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c := &rawClient{t: t, ws: ws, last: -1}
	t.Cleanup(func() { ws.Close() })
	return c
}

func (c *rawClient) send(op Op, d any) {
	c.t.Helper()
	b, err := json.Marshal(map[string]any{"op": op, "d": d})
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(websocket.TextMessage, b)
}

func (c *rawClient) sendRaw(mt int, b []byte) {
	c.t.Helper()
	if err := c.ws.WriteMessage(mt, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next reads one message; it returns an error for a close or timeout.
func (c *rawClient) next(timeout time.Duration) (msg, error) {
	c.ws.SetReadDeadline(time.Now().Add(timeout))
	mt, b, err := c.ws.ReadMessage()
	if err != nil {
		return msg{}, err
	}
	if mt == websocket.BinaryMessage {
		if len(b) < 3 {
			return msg{}, fmt.Errorf("short binary frame %x", b)
		}
		seq := int(binary.BigEndian.Uint16(b))
		c.last = seq
		return msg{Op: Op(b[2]), Binary: true, Body: b[3:], Seq: &seq}, nil
	}
	var m msg
	var raw struct {
		Op  Op              `json:"op"`
		D   json.RawMessage `json:"d"`
		Seq *int            `json:"seq"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return msg{}, fmt.Errorf("bad server json %q: %w", b, err)
	}
	m.Op, m.D, m.Seq = raw.Op, raw.D, raw.Seq
	if m.Seq != nil {
		c.last = *m.Seq
	}
	return m, nil
}

// expect reads until a message with op arrives (skipping heartbeat ACKs and
// speaking/connect messages only if skip is set).
func (c *rawClient) expect(op Op) msg {
	c.t.Helper()
	for {
		m, err := c.next(5 * time.Second)
		if err != nil {
			c.t.Fatalf("waiting for %v: %v", op, err)
		}
		if m.Op == op {
			return m
		}
		if m.Op == OpHeartbeatACK && op != OpHeartbeatACK {
			continue
		}
		c.t.Fatalf("waiting for %v: got %v %s", op, m.Op, m.D)
	}
}

// expectClose reads until the connection closes and checks the code.
func (c *rawClient) expectClose(code int) {
	c.t.Helper()
	for {
		_, err := c.next(5 * time.Second)
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			c.t.Fatalf("want close %d, got %v", code, err)
		}
		if ce.Code != code {
			c.t.Fatalf("want close %d, got %d %q", code, ce.Code, ce.Text)
		}
		return
	}
}

func (c *rawClient) decode(m msg, v any) {
	c.t.Helper()
	if err := json.Unmarshal(m.D, v); err != nil {
		c.t.Fatalf("decode %v %s: %v", m.Op, m.D, err)
	}
}

// rawVoice is a raw client that completed the handshake, with its UDP
// socket and transport key.
type rawVoice struct {
	*rawClient
	sess    Session
	ssrc    uint32
	udp     *net.UDPConn
	server  *net.UDPAddr
	mode    Mode
	key     [32]byte
	counter uint32
	seq     uint16
	ts      uint32
}

func testSession(user, channel string) Session {
	return Session{GuildID: "1100000000000000001", ChannelID: channel, UserID: user, SessionID: "sess-" + user, Token: "tok-" + user + "-" + channel}
}

// joinRaw authorizes sess and runs the documented handshake:
// identify → hello, ready → IP discovery → select protocol → session description.
func joinRaw(t testing.TB, s *Server, sess Session, mode Mode) *rawVoice {
	t.Helper()
	if err := s.Authorize(sess); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, s, "?v=8")
	c.send(OpIdentify, map[string]any{"server_id": sess.GuildID, "user_id": sess.UserID, "session_id": sess.SessionID, "token": sess.Token, "max_dave_protocol_version": 1})
	c.expect(OpHello)
	var ready readyPayload
	c.decode(c.expect(OpReady), &ready)
	u, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	srv := &net.UDPAddr{IP: net.ParseIP(ready.IP), Port: ready.Port}
	ip, port := discover(t, u, srv, ready.SSRC)
	c.send(OpSelectProtocol, map[string]any{"protocol": "udp", "data": map[string]any{"address": ip, "port": port, "mode": mode.String()}})
	var sd sessionDescriptionPayload
	m := c.expect(OpSessionDescription)
	c.decode(m, &sd)
	if sd.Mode != mode.String() {
		t.Fatalf("session description mode %q, want %q", sd.Mode, mode)
	}
	v := &rawVoice{rawClient: c, sess: sess, ssrc: ready.SSRC, udp: u, server: srv, mode: mode, seq: 100, ts: 5000}
	for i, b := range sd.SecretKey {
		v.key[i] = byte(b)
	}
	return v
}

// discover performs IP discovery as the docs describe it.
func discover(t testing.TB, u *net.UDPConn, srv *net.UDPAddr, ssrc uint32) (string, int) {
	t.Helper()
	req := make([]byte, 74)
	binary.BigEndian.PutUint16(req[0:], 1)
	binary.BigEndian.PutUint16(req[2:], 70)
	binary.BigEndian.PutUint32(req[4:], ssrc)
	if _, err := u.WriteToUDP(req, srv); err != nil {
		t.Fatal(err)
	}
	resp := make([]byte, 1500)
	u.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := u.ReadFromUDP(resp)
	if err != nil {
		t.Fatalf("ip discovery: %v", err)
	}
	resp = resp[:n]
	if n != 74 || binary.BigEndian.Uint16(resp) != 2 || binary.BigEndian.Uint16(resp[2:]) != 70 || binary.BigEndian.Uint32(resp[4:]) != ssrc {
		t.Fatalf("bad ip discovery response %x", resp)
	}
	addr := string(resp[8:72])
	addr = addr[:strings.IndexByte(addr, 0)]
	return addr, int(binary.BigEndian.Uint16(resp[72:]))
}

// clientSeal encrypts an rtpsize packet the way the docs describe,
// independently of the server's code: AAD is the clear header (incl. CSRCs
// and extension preamble), the 32-bit counter goes big-endian at the
// start of the nonce and is appended to the packet.
func clientSeal(t testing.TB, mode Mode, key [32]byte, header, body []byte, counter uint32) []byte {
	t.Helper()
	var a cipher.AEAD
	var err error
	nonce := make([]byte, 12)
	if mode == ModeXChaCha20Poly1305RTPSize {
		a, err = chacha20poly1305.NewX(key[:])
		nonce = make([]byte, 24)
	} else {
		var b cipher.Block
		b, _ = aes.NewCipher(key[:])
		a, err = cipher.NewGCM(b)
	}
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(nonce, counter)
	out := append([]byte(nil), header...)
	out = a.Seal(out, nonce, body, header)
	return binary.BigEndian.AppendUint32(out, counter)
}

// clientOpen decrypts a packet the forwarding unit sent (plain 12-byte
// header expected) and returns header fields and payload.
func clientOpen(t testing.TB, mode Mode, key [32]byte, pkt []byte) (seq uint16, ts, ssrc, counter uint32, payload []byte) {
	t.Helper()
	if len(pkt) < 12+16+4 || pkt[0] != 0x80 || pkt[1] != 0x78 {
		t.Fatalf("bad forwarded packet %x", pkt)
	}
	var a cipher.AEAD
	nonce := make([]byte, 12)
	if mode == ModeXChaCha20Poly1305RTPSize {
		a, _ = chacha20poly1305.NewX(key[:])
		nonce = make([]byte, 24)
	} else {
		b, _ := aes.NewCipher(key[:])
		a, _ = cipher.NewGCM(b)
	}
	counter = binary.BigEndian.Uint32(pkt[len(pkt)-4:])
	binary.BigEndian.PutUint32(nonce, counter)
	p, err := a.Open(nil, nonce, pkt[12:len(pkt)-4], pkt[:12])
	if err != nil {
		t.Fatalf("open forwarded packet: %v", err)
	}
	return binary.BigEndian.Uint16(pkt[2:]), binary.BigEndian.Uint32(pkt[4:]), binary.BigEndian.Uint32(pkt[8:]), counter, p
}

// sendOpus sends one opus frame as RTP with a plain header.
func (v *rawVoice) sendOpus(t testing.TB, frame []byte) {
	t.Helper()
	v.seq++
	v.ts += 960
	v.counter++
	hdr := make([]byte, 12)
	hdr[0], hdr[1] = 0x80, 0x78
	binary.BigEndian.PutUint16(hdr[2:], v.seq)
	binary.BigEndian.PutUint32(hdr[4:], v.ts)
	binary.BigEndian.PutUint32(hdr[8:], v.ssrc)
	if _, err := v.udp.WriteToUDP(clientSeal(t, v.mode, v.key, hdr, frame, v.counter), v.server); err != nil {
		t.Fatal(err)
	}
}

// recvRTP reads one forwarded packet.
func (v *rawVoice) recvRTP(t testing.TB, timeout time.Duration) ([]byte, bool) {
	t.Helper()
	buf := make([]byte, 2048)
	v.udp.SetReadDeadline(time.Now().Add(timeout))
	n, _, err := v.udp.ReadFromUDP(buf)
	if err != nil {
		return nil, false
	}
	return buf[:n], true
}

// speak sends op 5 and waits until the server processed it (a heartbeat
// round trip on the same socket).
func (v *rawVoice) speak(flags int) {
	v.send(OpSpeaking, map[string]any{"speaking": flags, "delay": 0, "ssrc": v.ssrc})
	v.send(OpHeartbeat, map[string]any{"t": 7, "seq_ack": v.last})
	v.expect(OpHeartbeatACK)
}

type netUDPAddr = net.UDPAddr

func newUDP(t testing.TB) *net.UDPConn {
	t.Helper()
	u, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	return u
}
