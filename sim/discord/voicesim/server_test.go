package voicesim

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/internal/logbuf"
	"github.com/gorilla/websocket"
)

const guild = "1100000000000000001"

func TestHandshake(t *testing.T) {
	for _, mode := range []Mode{ModeAES256GCMRTPSize, ModeXChaCha20Poly1305RTPSize} {
		t.Run(mode.String(), func(t *testing.T) {
			s := serve(t, WithHeartbeat(2500*time.Millisecond, 10*time.Second))
			sess := testSession("1100000000000000010", "1100000000000000003")
			if err := s.Authorize(sess); err != nil {
				t.Fatal(err)
			}
			c := dialRaw(t, s, "?v=8")
			// Identify first, as @discordjs/voice does (it does not wait for Hello).
			c.send(OpIdentify, map[string]any{"server_id": sess.GuildID, "user_id": sess.UserID, "session_id": sess.SessionID, "token": sess.Token, "max_dave_protocol_version": 1})
			hello := c.expect(OpHello)
			if hello.Seq != nil {
				t.Errorf("hello carries seq %d", *hello.Seq)
			}
			var hp helloPayload
			c.decode(hello, &hp)
			if hp.HeartbeatInterval != 2500 {
				t.Errorf("heartbeat_interval %v, want 2500", hp.HeartbeatInterval)
			}
			var ready readyPayload
			c.decode(c.expect(OpReady), &ready)
			if ready.SSRC == 0 || ready.IP != "127.0.0.1" || ready.Port != s.UDPAddr().Port {
				t.Errorf("ready %+v", ready)
			}
			if want := []string{"aead_aes256_gcm_rtpsize", "aead_xchacha20_poly1305_rtpsize"}; !slices.Equal(ready.Modes, want) {
				t.Errorf("modes %v, want %v", ready.Modes, want)
			}
			if ssrc, _ := s.SSRC(guild, sess.UserID); ssrc != ready.SSRC {
				t.Errorf("SSRC() %d, ready %d", ssrc, ready.SSRC)
			}
			u := newUDP(t)
			ip, port := discover(t, u, s.UDPAddr(), ready.SSRC)
			if ip != "127.0.0.1" || port != u.LocalAddr().(*netUDPAddr).Port {
				t.Errorf("discovered %s:%d, want 127.0.0.1:%d", ip, port, u.LocalAddr().(*netUDPAddr).Port)
			}
			c.send(OpSelectProtocol, map[string]any{"protocol": "udp", "data": map[string]any{"address": ip, "port": port, "mode": mode.String()}})
			m := c.expect(OpSessionDescription)
			if m.Seq == nil || *m.Seq != 1 {
				t.Errorf("session description seq %v, want 1", m.Seq)
			}
			var raw map[string]json.RawMessage
			c.decode(m, &raw)
			var key []int
			json.Unmarshal(raw["secret_key"], &key)
			if len(key) != 32 || string(raw["dave_protocol_version"]) != "0" || string(raw["mode"]) != `"`+mode.String()+`"` {
				t.Errorf("session description %s", m.D)
			}
			// Heartbeat (v8) → ACK echoing t, without seq.
			c.send(OpHeartbeat, map[string]any{"t": 1501184119561, "seq_ack": 1})
			ack := c.expect(OpHeartbeatACK)
			if string(ack.D) != `{"t":1501184119561}` || ack.Seq != nil {
				t.Errorf("ack %s seq %v", ack.D, ack.Seq)
			}
			if st := s.Stats(); st.IPDiscovery != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestCAFile(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(s.CAFile())
	if err != nil || !bytes.Equal(b, s.CACertPEM()) {
		t.Fatalf("CA file: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.CAFile()); !os.IsNotExist(err) {
		t.Fatalf("CA file survives Close: %v", err)
	}
}

func TestCloseCodes(t *testing.T) {
	sess := testSession("1100000000000000010", "1100000000000000003")
	ident := func(c *rawClient, mut func(map[string]any)) {
		d := map[string]any{"server_id": sess.GuildID, "user_id": sess.UserID, "session_id": sess.SessionID, "token": sess.Token, "max_dave_protocol_version": 1}
		if mut != nil {
			mut(d)
		}
		c.send(OpIdentify, d)
	}
	tests := []struct {
		name  string
		query string
		opts  []Option
		run   func(t *testing.T, c *rawClient)
		code  int
	}{
		{"version 7", "?v=7", nil, func(*testing.T, *rawClient) {}, 4020},
		{"no version", "", nil, func(*testing.T, *rawClient) {}, 4020},
		{"select before identify", "?v=8", nil, func(t *testing.T, c *rawClient) {
			c.send(OpSelectProtocol, map[string]any{"protocol": "udp"})
		}, 4003},
		{"binary before identify", "?v=8", nil, func(t *testing.T, c *rawClient) { c.sendRaw(websocket.BinaryMessage, []byte{26, 1}) }, 4003},
		{"bad token", "?v=8", nil, func(t *testing.T, c *rawClient) {
			ident(c, func(d map[string]any) { d["token"] = "nope" })
		}, 4004},
		{"wrong user", "?v=8", nil, func(t *testing.T, c *rawClient) {
			ident(c, func(d map[string]any) { d["user_id"] = "1" })
		}, 4004},
		{"wrong guild", "?v=8", nil, func(t *testing.T, c *rawClient) {
			ident(c, func(d map[string]any) { d["server_id"] = "1" })
		}, 4004},
		{"stale session id", "?v=8", nil, func(t *testing.T, c *rawClient) {
			ident(c, func(d map[string]any) { d["session_id"] = "old" })
		}, 4006},
		{"identify twice", "?v=8", nil, func(t *testing.T, c *rawClient) { ident(c, nil); ident(c, nil) }, 4005},
		{"not json", "?v=8", nil, func(t *testing.T, c *rawClient) { c.sendRaw(websocket.TextMessage, []byte("{op:0")) }, 4002},
		{"no op", "?v=8", nil, func(t *testing.T, c *rawClient) { c.sendRaw(websocket.TextMessage, []byte(`{"d":{}}`)) }, 4002},
		{"identify missing token", "?v=8", nil, func(t *testing.T, c *rawClient) {
			ident(c, func(d map[string]any) { delete(d, "token") })
		}, 4002},
		{"unknown op", "?v=8", nil, func(t *testing.T, c *rawClient) { ident(c, nil); c.send(Op(99), map[string]any{}) }, 4001},
		{"server op from client", "?v=8", nil, func(t *testing.T, c *rawClient) { ident(c, nil); c.send(OpReady, map[string]any{}) }, 4001},
		{"unknown binary op", "?v=8", nil, func(t *testing.T, c *rawClient) { ident(c, nil); c.sendRaw(websocket.BinaryMessage, []byte{25, 0}) }, 4001},
		{"unknown protocol", "?v=8", nil, func(t *testing.T, c *rawClient) {
			ident(c, nil)
			c.send(OpSelectProtocol, map[string]any{"protocol": "tcp", "data": map[string]any{"address": "127.0.0.1", "port": 5, "mode": "aead_aes256_gcm_rtpsize"}})
		}, 4012},
		{"deprecated mode", "?v=8", nil, func(t *testing.T, c *rawClient) {
			ident(c, nil)
			c.send(OpSelectProtocol, map[string]any{"protocol": "udp", "data": map[string]any{"address": "127.0.0.1", "port": 5, "mode": "xsalsa20_poly1305"}})
		}, 4016},
		{"mode not offered", "?v=8", []Option{WithModes(ModeXChaCha20Poly1305RTPSize)}, func(t *testing.T, c *rawClient) {
			ident(c, nil)
			c.send(OpSelectProtocol, map[string]any{"protocol": "udp", "data": map[string]any{"address": "127.0.0.1", "port": 5, "mode": "aead_aes256_gcm_rtpsize"}})
		}, 4016},
		{"bad address", "?v=8", nil, func(t *testing.T, c *rawClient) {
			ident(c, nil)
			c.send(OpSelectProtocol, map[string]any{"protocol": "udp", "data": map[string]any{"address": "nowhere", "port": 5, "mode": "aead_aes256_gcm_rtpsize"}})
		}, 4020},
		{"foreign ssrc", "?v=8", nil, func(t *testing.T, c *rawClient) {
			ident(c, nil)
			c.send(OpSpeaking, map[string]any{"speaking": 1, "delay": 0, "ssrc": 1})
		}, 4020},
		{"dave required", "?v=8", []Option{WithRequireDAVE()}, func(t *testing.T, c *rawClient) {
			ident(c, func(d map[string]any) { d["max_dave_protocol_version"] = 0 })
		}, 4017},
		{"heartbeat timeout", "?v=8", []Option{WithHeartbeat(50*time.Millisecond, 200*time.Millisecond)}, func(t *testing.T, c *rawClient) {
			ident(c, nil)
		}, 4009},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := serve(t, tt.opts...)
			if err := s.Authorize(sess); err != nil {
				t.Fatal(err)
			}
			c := dialRaw(t, s, tt.query)
			tt.run(t, c)
			c.expectClose(tt.code)
		})
	}
}

func TestAuthorizeValidates(t *testing.T) {
	s := serve(t)
	if err := s.Authorize(Session{GuildID: guild, UserID: "1"}); err == nil {
		t.Fatal("Authorize accepted a session without token")
	}
}

// TestResumeReplay drops a client's TCP connection, produces messages while
// it is away, and checks that Resume (op 7) with seq_ack replays exactly
// the missed messages, in order, after Resumed (op 9).
func TestResumeReplay(t *testing.T) {
	s := serve(t)
	a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), ModeAES256GCMRTPSize)
	b := joinRaw(t, s, testSession("1100000000000000011", "1100000000000000003"), ModeAES256GCMRTPSize)
	a.expect(OpClientsConnect) // b joined
	b.expect(OpClientsConnect) // list with a
	b.speak(1)
	m := a.expect(OpSpeaking)
	ack := *m.Seq
	a.send(OpHeartbeat, map[string]any{"t": 1, "seq_ack": ack})
	a.expect(OpHeartbeatACK)

	if err := s.DropVoice(a.sess.UserID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.next(5 * time.Second); err == nil || websocket.IsCloseError(err) {
		t.Fatalf("want transport drop without close frame, got %v", err)
	}
	// Missed while away: speaking 0 and a disconnect of b.
	b.speak(0)
	b.ws.Close()
	s.Revoke(guild, b.sess.UserID)
	waitFor(t, func() bool { return len(s.Users(guild, a.sess.ChannelID)) == 1 })

	c := dialRaw(t, s, "?v=8")
	c.send(OpResume, map[string]any{"server_id": guild, "session_id": a.sess.SessionID, "token": a.sess.Token, "seq_ack": ack})
	c.expect(OpHello)
	if m := c.expect(OpResumed); string(m.D) != "null" || m.Seq != nil {
		t.Fatalf("resumed %s seq %v", m.D, m.Seq)
	}
	sp := c.expect(OpSpeaking)
	var spd serverSpeakingPayload
	c.decode(sp, &spd)
	if *sp.Seq != ack+1 || spd.Speaking != 0 || spd.UserID != b.sess.UserID || spd.SSRC != b.ssrc {
		t.Fatalf("replayed speaking seq %d %s, want seq %d", *sp.Seq, sp.D, ack+1)
	}
	dc := c.expect(OpClientDisconnect)
	if *dc.Seq != ack+2 || string(dc.D) != `{"user_id":"1100000000000000011"}` {
		t.Fatalf("replayed disconnect seq %d %s", *dc.Seq, dc.D)
	}
	// Live again: the resumed session gets new messages with the next seq.
	if err := s.SendJSON(guild, a.sess.UserID, OpDAVEPrepareEpoch, map[string]int{"epoch": 1, "protocol_version": 1}); err != nil {
		t.Fatal(err)
	}
	if m := c.expect(OpDAVEPrepareEpoch); *m.Seq != ack+3 {
		t.Fatalf("live seq %d, want %d", *m.Seq, ack+3)
	}
	// The UDP session survived: the key still works.
	a.rawClient = c
	a.speak(1)
	a.sendOpus(t, []byte{0xfc, 1, 2})
	waitFor(t, func() bool { return s.UserStats(a.sess.UserID).RTP == 1 })
}

func TestResumeFailures(t *testing.T) {
	t.Run("unknown session", func(t *testing.T) {
		s := serve(t)
		c := dialRaw(t, s, "?v=8")
		c.send(OpResume, map[string]any{"server_id": guild, "session_id": "x", "token": "y", "seq_ack": 3})
		c.expectClose(4006)
	})
	t.Run("buffer overrun", func(t *testing.T) {
		s := serve(t, WithResumeBuffer(4))
		a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), ModeAES256GCMRTPSize)
		s.DropVoice(a.sess.UserID)
		for i := range 6 {
			if err := s.SendJSON(guild, a.sess.UserID, OpDAVEPrepareEpoch, map[string]int{"epoch": i}); err != nil {
				t.Fatal(err)
			}
		}
		c := dialRaw(t, s, "?v=8")
		c.send(OpResume, map[string]any{"server_id": guild, "session_id": a.sess.SessionID, "token": a.sess.Token, "seq_ack": 1})
		c.expectClose(4006)
		if len(s.Users(guild, a.sess.ChannelID)) != 0 {
			t.Fatal("session survives a failed resume")
		}
	})
	t.Run("resume while old socket open", func(t *testing.T) {
		s := serve(t)
		a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), ModeAES256GCMRTPSize)
		c := dialRaw(t, s, "?v=8")
		c.send(OpResume, map[string]any{"server_id": guild, "session_id": a.sess.SessionID, "token": a.sess.Token, "seq_ack": 1})
		c.expect(OpHello)
		c.expect(OpResumed)
		if _, err := a.next(5 * time.Second); err == nil {
			t.Fatal("old socket still open after resume")
		}
	})
}

func TestCloseVoice(t *testing.T) {
	for _, code := range []int{1001, 4006, 4014, 4015, 4021, 4022} {
		t.Run(CloseCode(code).String(), func(t *testing.T) {
			s := serve(t)
			a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), ModeAES256GCMRTPSize)
			b := joinRaw(t, s, testSession("1100000000000000011", "1100000000000000003"), ModeAES256GCMRTPSize)
			a.expect(OpClientsConnect)
			b.expect(OpClientsConnect)
			if err := s.CloseVoice(a.sess.UserID, code); err != nil {
				t.Fatal(err)
			}
			a.expectClose(code)
			c := dialRaw(t, s, "?v=8")
			c.send(OpResume, map[string]any{"server_id": guild, "session_id": a.sess.SessionID, "token": a.sess.Token, "seq_ack": a.last})
			c.expect(OpHello)
			if CloseCode(code).Resumable() {
				c.expect(OpResumed)
				return
			}
			c.expectClose(4006)
			var d clientDisconnectPayload
			b.decode(b.expect(OpClientDisconnect), &d)
			if d.UserID != a.sess.UserID {
				t.Fatalf("op 13 for %q", d.UserID)
			}
		})
	}
	s := serve(t)
	if err := s.CloseVoice("nobody", 4014); err == nil {
		t.Fatal("CloseVoice of an unknown user succeeded")
	}
	if err := s.DropVoice("nobody"); err == nil {
		t.Fatal("DropVoice of an unknown user succeeded")
	}
}

func TestRevokeAndMove(t *testing.T) {
	s := serve(t)
	a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), ModeAES256GCMRTPSize)
	b := joinRaw(t, s, testSession("1100000000000000011", "1100000000000000003"), ModeAES256GCMRTPSize)
	a.expect(OpClientsConnect)

	// Moving b to another channel closes its connection with 4014 (moved).
	moved := testSession("1100000000000000011", "1100000000000000004")
	if err := s.Authorize(moved); err != nil {
		t.Fatal(err)
	}
	b.expectClose(4014)
	a.expect(OpClientDisconnect)
	// The old token is dead; the new one works.
	c := dialRaw(t, s, "?v=8")
	c.send(OpIdentify, map[string]any{"server_id": guild, "user_id": b.sess.UserID, "session_id": b.sess.SessionID, "token": b.sess.Token})
	c.expectClose(4004)

	s.Revoke(guild, a.sess.UserID)
	a.expectClose(4014)
	c = dialRaw(t, s, "?v=8")
	c.send(OpIdentify, map[string]any{"server_id": guild, "user_id": a.sess.UserID, "session_id": a.sess.SessionID, "token": a.sess.Token})
	c.expectClose(4004)
}

func TestBinaryFrames(t *testing.T) {
	got := make(chan BinaryMessage, 1)
	gotJSON := make(chan JSONMessage, 1)
	s := serve(t, WithOnBinary(func(m BinaryMessage) { got <- m }), WithOnJSON(func(m JSONMessage) { gotJSON <- m }))
	a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), ModeAES256GCMRTPSize)
	if err := s.SendBinary(guild, a.sess.UserID, OpMLSExternalSender, []byte{0x40, 0x41, 7}); err != nil {
		t.Fatal(err)
	}
	m := a.expect(OpMLSExternalSender)
	if !m.Binary || *m.Seq != 2 || !bytes.Equal(m.Body, []byte{0x40, 0x41, 7}) {
		t.Fatalf("binary frame %+v", m)
	}
	a.sendRaw(websocket.BinaryMessage, []byte{byte(OpMLSKeyPackage), 0, 1, 0, 2})
	select {
	case bm := <-got:
		if bm.Op != OpMLSKeyPackage || bm.UserID != a.sess.UserID || !bytes.Equal(bm.Payload, []byte{0, 1, 0, 2}) {
			t.Fatalf("OnBinary %+v", bm)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnBinary not called")
	}
	// DAVE JSON client ops are accepted while DAVE is off and passed on.
	a.send(OpDAVETransitionReady, map[string]any{"transition_id": 3})
	select {
	case jm := <-gotJSON:
		if jm.Op != OpDAVETransitionReady || jm.UserID != a.sess.UserID || string(jm.D) != `{"transition_id":3}` {
			t.Fatalf("OnJSON %+v", jm)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnJSON not called")
	}
	a.send(OpHeartbeat, map[string]any{"t": 9, "seq_ack": 2})
	a.expect(OpHeartbeatACK)
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a failure guard, not a timing requirement
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSlowClient checks that a client that stops reading never blocks the
// server: its connection is dropped once the send queue is full, and a
// resume replays everything, more messages than the queue holds.
func TestSlowClient(t *testing.T) {
	var logs logbuf.Buffer
	s := serve(t, WithResumeBuffer(4096), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), ModeAES256GCMRTPSize)
	big := bytes.Repeat([]byte{0xab}, 64<<10)
	const n = 600
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			if err := s.SendBinary(guild, a.sess.UserID, OpMLSProposals, big); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("SendBinary blocked on a client that does not read")
	}
	if !strings.Contains(logs.String(), "too slow") {
		t.Fatal("the slow connection was not dropped")
	}
	a.ws.Close()
	c := dialRaw(t, s, "?v=8")
	c.ws.SetReadLimit(1 << 20)
	c.send(OpResume, map[string]any{"server_id": guild, "session_id": a.sess.SessionID, "token": a.sess.Token, "seq_ack": 1})
	c.expect(OpHello)
	c.expect(OpResumed)
	for i := range n {
		m := c.expect(OpMLSProposals)
		if *m.Seq != i+2 || len(m.Body) != len(big) {
			t.Fatalf("replay %d: seq %d, %d bytes", i, *m.Seq, len(m.Body))
		}
	}
}

// TestRejoin: a new token for the same channel leaves the old connection
// alone until the user identifies again; then the old one is closed with
// 4014 and the channel sees the user leave and come back.
func TestRejoin(t *testing.T) {
	s := serve(t)
	a := joinRaw(t, s, testSession("1100000000000000010", "1100000000000000003"), ModeAES256GCMRTPSize)
	b := joinRaw(t, s, testSession("1100000000000000011", "1100000000000000003"), ModeAES256GCMRTPSize)
	a.expect(OpClientsConnect)
	b.expect(OpClientsConnect)
	oldSSRC := a.ssrc

	again := a.sess
	again.Token, again.SessionID = "tok-new", "sess-new"
	if err := s.Authorize(again); err != nil {
		t.Fatal(err)
	}
	a.send(OpHeartbeat, map[string]any{"t": 5, "seq_ack": a.last})
	a.expect(OpHeartbeatACK)

	n := joinRaw(t, s, again, ModeXChaCha20Poly1305RTPSize)
	a.expectClose(4014)
	if n.ssrc == oldSSRC {
		t.Fatal("a fresh identify reused the SSRC")
	}
	var dc clientDisconnectPayload
	b.decode(b.expect(OpClientDisconnect), &dc)
	var cc clientsConnectPayload
	b.decode(b.expect(OpClientsConnect), &cc)
	if dc.UserID != a.sess.UserID || len(cc.UserIDs) != 1 || cc.UserIDs[0] != a.sess.UserID {
		t.Fatalf("op 13 %+v, op 11 %+v", dc, cc)
	}
}

func TestHeartbeatForms(t *testing.T) {
	s := serve(t)
	c := dialRaw(t, s, "?v=8")
	c.expect(OpHello)
	tests := []struct {
		d    any
		want string
	}{
		{map[string]any{"t": 1501184119561, "seq_ack": 10}, `{"t":1501184119561}`},
		{map[string]any{"t": "nonce"}, `{"t":"nonce"}`}, // no seq_ack: allowed
		{1501184119561, `{"t":1501184119561}`},          // pre-v8 form
	}
	for _, tt := range tests {
		c.send(OpHeartbeat, tt.d)
		if m := c.expect(OpHeartbeatACK); string(m.D) != tt.want {
			t.Errorf("ack %s, want %s", m.D, tt.want)
		}
	}
	c.send(OpHeartbeat, map[string]any{"seq_ack": 1})
	c.expectClose(4002)
}

func TestCloseTwice(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.JoinMember(context.Background(), MemberOptions{GuildID: "1", ChannelID: "2", UserID: "3"}); err == nil {
		t.Fatal("JoinMember after Close succeeded")
	}
}

// TestHeartbeatsRecorded: Heartbeats counts a session's op 3 and keeps the
// last one's seq_ack, next to the last sequence number the session was sent.
func TestHeartbeatsRecorded(t *testing.T) {
	s := serve(t)
	sess := testSession("1100000000000000010", "1100000000000000003")
	if _, ok := s.Heartbeats(guild, sess.UserID); ok {
		t.Fatal("Heartbeats reports a session that does not exist")
	}
	a := joinRaw(t, s, sess, ModeAES256GCMRTPSize)
	joinRaw(t, s, testSession("1100000000000000011", "1100000000000000003"), ModeAES256GCMRTPSize)
	a.expect(OpClientsConnect) // sequenced: a.last moves on
	a.speak(1)                 // one heartbeat, acknowledging everything a has seen
	hb, ok := s.Heartbeats(guild, sess.UserID)
	if !ok || hb.Received != 1 || hb.LastSeqAck != a.last || hb.LastSeq != a.last || a.last < 1 {
		t.Fatalf("Heartbeats = %+v, %v; want 1 received, seq_ack and last seq %d", hb, ok, a.last)
	}
	a.send(OpHeartbeat, map[string]any{"t": 8})
	a.expect(OpHeartbeatACK)
	if hb, _ = s.Heartbeats(guild, sess.UserID); hb.Received != 2 || hb.LastSeqAck != -1 {
		t.Fatalf("after a heartbeat without seq_ack: %+v", hb)
	}
}
