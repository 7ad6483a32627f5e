package discordsim

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/banterbot/banter/sim/discord/world"
)

type readyEvent struct {
	V                int                    `json:"v"`
	SessionID        string                 `json:"session_id"`
	ResumeGatewayURL string                 `json:"resume_gateway_url"`
	User             wireSelfUser           `json:"user"`
	Guilds           []wireUnavailableGuild `json:"guilds"`
	Application      *readyApplication      `json:"application"`
}

// identify connects, checks Hello and identifies; it returns the READY.
func identify(t *testing.T, s *Server, token string, intents Intents) (*rawGW, readyEvent) {
	t.Helper()
	g := dialGW(t, s, "v=10&encoding=json")
	hello := g.read()
	if hello.Op != 10 {
		t.Fatalf("first frame op %d, want 10 Hello", hello.Op)
	}
	g.send(identifyPayload(token, intents, false))
	f := g.read()
	if f.typ() != "READY" || f.S == nil || *f.S != 1 {
		t.Fatalf("after Identify got %s s=%v, want READY s=1", f.typ(), f.S)
	}
	var r readyEvent
	if err := json.Unmarshal(f.D, &r); err != nil {
		t.Fatal(err)
	}
	return g, r
}

const allIntents = IntentGuilds | IntentGuildMembers | IntentGuildVoiceStates | IntentGuildMessages | IntentGuildMessageTyping | IntentMessageContent

func TestHelloHasIntegerInterval(t *testing.T) {
	w := newWorld(t, WithHeartbeatInterval(41250*time.Millisecond))
	g := dialGW(t, w.sim, "v=9&encoding=json")
	_, data, err := g.ws.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"op":10,"d":{"heartbeat_interval":41250},"s":null,"t":null}`; string(data) != want {
		t.Fatalf("Hello = %s, want %s", data, want)
	}
}

func TestIdentifyReadyGuildCreate(t *testing.T) {
	w := newWorld(t)
	tests := []struct {
		name  string
		token string
	}{
		{"raw token", w.sim.Token()},
		{"Bot prefix (discordgo)", "Bot " + w.sim.Token()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, r := identify(t, w.sim, tc.token, allIntents)
			if r.V != 10 || r.SessionID == "" || r.ResumeGatewayURL != w.sim.GatewayURL() {
				t.Errorf("READY = %+v", r)
			}
			if r.User.ID != w.sim.BotID() || !r.User.Bot || r.User.Username != "simbot" {
				t.Errorf("READY.user = %+v", r.User)
			}
			if r.Application == nil || r.Application.ID != w.sim.BotID() {
				t.Errorf("READY.application = %+v", r.Application)
			}
			if len(r.Guilds) != 1 || r.Guilds[0].ID != w.guild || !r.Guilds[0].Unavailable {
				t.Errorf("READY.guilds = %+v, want one unavailable stub", r.Guilds)
			}
			f := g.read()
			if f.typ() != "GUILD_CREATE" || *f.S != 2 {
				t.Fatalf("got %s, want GUILD_CREATE s=2", f.typ())
			}
			// Fields that crash discord.js or discordgo when missing (§2.3).
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(f.D, &raw); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"unavailable", "channels", "members", "roles", "voice_states", "threads", "joined_at", "member_count"} {
				if _, ok := raw[k]; !ok {
					t.Errorf("GUILD_CREATE lacks %q", k)
				}
			}
			var gc wireGuildCreate
			if err := json.Unmarshal(f.D, &gc); err != nil {
				t.Fatal(err)
			}
			// Without the presences intent the members are the bot's own (alice is in no voice channel).
			if gc.Unavailable || len(gc.Channels) != 2 || len(gc.Members) != 1 || gc.Members[0].User == nil || gc.Members[0].User.ID != w.sim.BotID() {
				t.Errorf("GUILD_CREATE = %+v", gc)
			}
			if gc.Roles[0].ID != RoleID(w.guild) || gc.Roles[0].Permissions != world.EveryonePermissions {
				t.Errorf("@everyone role = %+v", gc.Roles[0])
			}
		})
	}
}

func TestGatewayCloseCodes(t *testing.T) {
	w := newWorld(t, WithPrivilegedIntents(IntentGuildMembers))
	tests := []struct {
		name  string
		query string
		send  []any
		want  CloseCode
	}{
		{"bad token", "v=10", []any{identifyPayload("nope", 1, false)}, CloseAuthenticationFailed},
		{"bad api version", "v=6", nil, CloseInvalidAPIVersion},
		{"garbage", "v=10", []any{"not a payload"}, CloseDecodeError},
		{"unknown opcode", "v=10", []any{map[string]any{"op": 42, "d": nil}}, CloseUnknownOpcode},
		{"dispatch before identify", "v=10", []any{map[string]any{"op": 4, "d": map[string]any{"guild_id": "1", "channel_id": nil}}}, CloseNotAuthenticated},
		{"missing intents", "v=10", []any{map[string]any{"op": 2, "d": map[string]any{"token": w.sim.Token()}}}, CloseInvalidIntents},
		{"disallowed intent", "v=10", []any{identifyPayload(w.sim.Token(), IntentMessageContent, false)}, CloseDisallowedIntents},
		{"identify twice", "v=10", []any{identifyPayload(w.sim.Token(), 1, false), identifyPayload(w.sim.Token(), 1, false)}, CloseAlreadyAuthenticated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := dialGW(t, w.sim, tc.query)
			for _, m := range tc.send {
				if err := g.ws.WriteJSON(m); err != nil {
					t.Fatal(err)
				}
			}
			if got := CloseCode(g.closeCode()); got != tc.want {
				t.Fatalf("close code %d, want %d", got, tc.want)
			}
		})
	}
}

func TestHeartbeatACKAndWithheld(t *testing.T) {
	w := newWorld(t)
	g, _ := identify(t, w.sim, w.sim.Token(), allIntents)
	g.until("GUILD_CREATE")
	g.send(map[string]any{"op": 1, "d": 2})
	if f := g.read(); f.Op != 11 {
		t.Fatalf("got op %d, want 11", f.Op)
	}
	g.send(map[string]any{"op": 1, "d": nil}) // null before any dispatch is legal too
	if f := g.read(); f.Op != 11 {
		t.Fatalf("got op %d, want 11", f.Op)
	}
	if err := w.sim.WithholdACKs(1); err != nil {
		t.Fatal(err)
	}
	g.send(map[string]any{"op": 1, "d": 2})
	g.send(map[string]any{"op": 1, "d": 2})
	if f := g.read(); f.Op != 11 {
		t.Fatalf("got op %d, want 11 for the second beat", f.Op)
	}
	ev := w.sim.GatewayEvents()
	var acks []bool
	for _, e := range ev {
		if e.Kind == GatewayHeartbeat {
			acks = append(acks, e.ACKed)
		}
	}
	if want := []bool{true, true, false, true}; len(acks) != 4 || acks[2] || !acks[3] {
		t.Fatalf("heartbeat ACKs %v, want %v", acks, want)
	}
	// Server-requested heartbeat (op 1).
	if err := w.sim.RequestHeartbeat(); err != nil {
		t.Fatal(err)
	}
	if f := g.read(); f.Op != 1 {
		t.Fatalf("got op %d, want 1", f.Op)
	}
}

func TestMissedHeartbeatsTimeOut(t *testing.T) {
	w := newWorld(t, WithHeartbeatInterval(20*time.Millisecond))
	g, _ := identify(t, w.sim, w.sim.Token(), allIntents)
	// Never beat: the server closes with 4009 after 1.5 intervals + 1 s.
	if got := CloseCode(g.closeCode()); got != CloseSessionTimedOut {
		t.Fatalf("close %d, want %d", got, CloseSessionTimedOut)
	}
	if n := w.sim.CountGateway(GatewayTimedOut); n != 1 {
		t.Fatalf("%d timeouts recorded", n)
	}
}

func TestResumeReplaysMissedDispatches(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	g, r := identify(t, w.sim, w.sim.Token(), allIntents)
	gc := g.until("GUILD_CREATE")
	last := *gc.S
	g.ws.Close()
	if _, err := waitGateway(ctx, w.sim, GatewayDisconnected, 1); err != nil {
		t.Fatal(err)
	}
	// Posted while the bot is away: kept for replay.
	for _, c := range []string{"one", "two"} {
		if _, err := w.sim.Post(ctx, w.alice, w.text, c); err != nil {
			t.Fatal(err)
		}
	}
	g2 := dialGW(t, w.sim, "v=10&encoding=json")
	g2.read() // Hello
	g2.send(map[string]any{"op": 6, "d": map[string]any{"token": "Bot " + w.sim.Token(), "session_id": r.SessionID, "seq": last}})
	var got []string
	for {
		f := g2.read()
		if f.typ() == "RESUMED" {
			if *f.S != last+3 {
				t.Errorf("RESUMED s=%d, want %d", *f.S, last+3)
			}
			break
		}
		var m wireMessage
		_ = json.Unmarshal(f.D, &m)
		got = append(got, f.typ()+":"+m.Content)
		if *f.S != last+int64(len(got)) {
			t.Errorf("replayed s=%d, want %d", *f.S, last+int64(len(got)))
		}
	}
	if strings.Join(got, ",") != "MESSAGE_CREATE:one,MESSAGE_CREATE:two" {
		t.Fatalf("replayed %v", got)
	}
	e, err := waitGateway(ctx, w.sim, GatewayResumed, 1)
	if err != nil || e.Replayed != 2 {
		t.Fatalf("resume event %+v, %v", e, err)
	}

	t.Run("unknown session gets op 9 false", func(t *testing.T) {
		g3 := dialGW(t, w.sim, "v=10")
		g3.read()
		g3.send(map[string]any{"op": 6, "d": map[string]any{"token": w.sim.Token(), "session_id": "nope", "seq": 1}})
		f := g3.read()
		if f.Op != 9 || string(f.D) != "false" {
			t.Fatalf("got op %d d=%s, want 9 false", f.Op, f.D)
		}
		// The socket stays open and accepts a fresh Identify (discordgo).
		g3.send(identifyPayload(w.sim.Token(), allIntents, false))
		if f := g3.read(); f.typ() != "READY" {
			t.Fatalf("got %s, want READY", f.typ())
		}
	})
}

func TestResumeOutsideReplayWindow(t *testing.T) {
	w := newWorld(t, WithReplayLimit(2))
	ctx := testCtx(t)
	g, r := identify(t, w.sim, w.sim.Token(), allIntents)
	g.until("GUILD_CREATE")
	g.ws.Close()
	if _, err := waitGateway(ctx, w.sim, GatewayDisconnected, 1); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := w.sim.Post(ctx, w.alice, w.text, "x"); err != nil {
			t.Fatal(err)
		}
	}
	g2 := dialGW(t, w.sim, "v=10")
	g2.read()
	g2.send(map[string]any{"op": 6, "d": map[string]any{"token": w.sim.Token(), "session_id": r.SessionID, "seq": 2}})
	if f := g2.read(); f.Op != 9 {
		t.Fatalf("got op %d, want 9", f.Op)
	}
}

func TestReconnectAndInvalidSessionOps(t *testing.T) {
	w := newWorld(t)
	g, _ := identify(t, w.sim, w.sim.Token(), allIntents)
	g.until("GUILD_CREATE")
	if err := w.sim.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	if f := g.read(); f.Op != 7 {
		t.Fatalf("got op %d, want 7", f.Op)
	}
	for _, resumable := range []bool{true, false} {
		if err := w.sim.ForceInvalidSession(resumable); err != nil {
			t.Fatal(err)
		}
		f := g.read()
		if want, _ := json.Marshal(resumable); f.Op != 9 || string(f.D) != string(want) {
			t.Fatalf("got op %d d=%s, want 9 %s", f.Op, f.D, want)
		}
		// Same socket, fresh Identify, as discordgo does.
		g.send(identifyPayload("Bot "+w.sim.Token(), allIntents, false))
		if f := g.until("READY"); f.S == nil || *f.S != 1 {
			t.Fatalf("READY s=%v, want 1 for a new session", f.S)
		}
		g.until("GUILD_CREATE")
	}
	if err := w.sim.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
}

func TestPayloadCompression(t *testing.T) {
	w := newWorld(t)
	g := dialGW(t, w.sim, "v=9&encoding=json")
	if f := g.read(); f.Binary || f.Op != 10 {
		t.Fatalf("Hello binary=%v op=%d, want plain text op 10", f.Binary, f.Op)
	}
	g.send(identifyPayload(w.sim.Token(), allIntents, true))
	for _, want := range []string{"READY", "GUILD_CREATE"} {
		f := g.read()
		if !f.Binary || f.typ() != want {
			t.Fatalf("got %s binary=%v, want compressed %s", f.typ(), f.Binary, want)
		}
	}
	g.send(map[string]any{"op": 1, "d": 2})
	if f := g.read(); !f.Binary || f.Op != 11 {
		t.Fatalf("ACK binary=%v op=%d", f.Binary, f.Op)
	}
}

func TestZlibStream(t *testing.T) {
	w := newWorld(t)
	g := dialGW(t, w.sim, "v=10&encoding=json&compress=zlib-stream")
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() { // the pump: frames into one inflate context
		defer close(done)
		for {
			mt, data, err := g.ws.ReadMessage()
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			if mt != websocket.BinaryMessage || !bytes.HasSuffix(data, []byte{0, 0, 0xff, 0xff}) {
				pw.CloseWithError(io.ErrUnexpectedEOF)
				return
			}
			if _, err := pw.Write(data); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { g.ws.Close(); pr.Close(); <-done })
	z, err := zlib.NewReader(pr)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(z)
	next := func() gwFrame {
		var f gwFrame
		if err := dec.Decode(&f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if f := next(); f.Op != 10 {
		t.Fatalf("op %d, want Hello", f.Op)
	}
	g.send(identifyPayload(w.sim.Token(), allIntents, false))
	for _, want := range []string{"READY", "GUILD_CREATE"} {
		if f := next(); f.typ() != want {
			t.Fatalf("got %q, want %s", f.typ(), want)
		}
	}
}

func TestIntentsAndMessageContent(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	noContent, _ := identify(t, w.sim, w.sim.Token(), IntentGuilds|IntentGuildMessages)
	noContent.until("GUILD_CREATE")
	noMessages, _ := identify(t, w.sim, w.sim.Token(), IntentGuilds)
	noMessages.until("GUILD_CREATE")
	full, _ := identify(t, w.sim, w.sim.Token(), allIntents)
	full.until("GUILD_CREATE")

	tests := []struct {
		name, content   string
		wantNoIntent    string
		mentionsBotSeen bool
	}{
		{"plain", "hello", "", false},
		{"mentions the bot", "hi " + MentionUser(w.sim.BotID()), "hi " + MentionUser(w.sim.BotID()), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := w.sim.Post(ctx, w.alice, w.text, tc.content); err != nil {
				t.Fatal(err)
			}
			var a, b wireMessage
			_ = json.Unmarshal(noContent.until("MESSAGE_CREATE").D, &a)
			_ = json.Unmarshal(full.until("MESSAGE_CREATE").D, &b)
			if a.Content != tc.wantNoIntent {
				t.Errorf("without MESSAGE_CONTENT: content %q, want %q", a.Content, tc.wantNoIntent)
			}
			if b.Content != tc.content {
				t.Errorf("with MESSAGE_CONTENT: content %q, want %q", b.Content, tc.content)
			}
			if a.ID != b.ID || a.Author.ID != w.alice {
				t.Errorf("metadata differs: %+v vs %+v", a, b)
			}
		})
	}
	// The session without GUILD_MESSAGES got no MESSAGE_CREATE at all: its
	// next dispatch is the typing start below... which it also lacks the
	// intent for, so use a member add (GUILDS-independent) as a marker.
	if err := w.sim.StartTyping(w.alice, w.text); err != nil {
		t.Fatal(err)
	}
	w.sim.CreateTextChannel(w.guild, "marker")
	if f := noMessages.read(); f.typ() != "CHANNEL_CREATE" {
		t.Fatalf("session without GUILD_MESSAGES got %s", f.typ())
	}
	if f := full.read(); f.typ() != "TYPING_START" {
		t.Fatalf("full session got %s, want TYPING_START", f.typ())
	}
}

func TestVoiceSignallingOrder(t *testing.T) {
	backend := &fakeVoice{endpoint: "localhost:8443"}
	w := newWorld(t, WithVoiceBackend(backend))
	otherVoice := w.sim.CreateVoiceChannel(w.guild, "Other")
	other, _ := identify(t, w.sim, w.sim.UserToken(w.alice), allIntents)
	other.until("GUILD_CREATE")
	g, r := identify(t, w.sim, w.sim.Token(), allIntents)
	g.until("GUILD_CREATE")

	var tokens []string
	for i, ch := range []ChannelID{w.voice, otherVoice} {
		g.send(map[string]any{"op": 4, "d": map[string]any{"guild_id": w.guild, "channel_id": ch, "self_mute": false, "self_deaf": true}})
		vs := g.read()
		var st wireVoiceState
		_ = json.Unmarshal(vs.D, &st)
		if vs.typ() != "VOICE_STATE_UPDATE" || st.SessionID != r.SessionID || st.UserID != w.sim.BotID() || *st.ChannelID != ch || !st.SelfDeaf || st.Member == nil || st.Member.User == nil {
			t.Fatalf("join %d: first %s %+v, want our VOICE_STATE_UPDATE", i, vs.typ(), st)
		}
		srv := g.read()
		var su struct{ Token, GuildID, Endpoint string }
		_ = json.Unmarshal(srv.D, &su)
		if srv.typ() != "VOICE_SERVER_UPDATE" || su.Endpoint != "localhost:8443" || su.Token == "" {
			t.Fatalf("join %d: then %s %s", i, srv.typ(), srv.D)
		}
		tokens = append(tokens, su.Token)
		if f := other.until("VOICE_STATE_UPDATE"); !strings.Contains(string(f.D), string(ch)) {
			t.Fatalf("other member saw %s", f.D)
		}
		last := backend.grants()[len(backend.grants())-1]
		if last.Token != su.Token || last.SessionID != r.SessionID || last.ChannelID != ch || !last.SelfDeaf {
			t.Fatalf("backend grant %+v", last)
		}
	}
	if tokens[0] == tokens[1] {
		t.Fatal("a move must get a fresh token")
	}
	g.send(map[string]any{"op": 4, "d": map[string]any{"guild_id": w.guild, "channel_id": nil}})
	f := g.read()
	if f.typ() != "VOICE_STATE_UPDATE" || !strings.Contains(string(f.D), `"channel_id":null`) {
		t.Fatalf("leave: got %s %s", f.typ(), f.D)
	}
	if got := backend.awaitRevoked(t, 1); len(got) != 1 || got[0] != w.sim.BotID() {
		t.Fatalf("revoked %v", got)
	}
	if _, ok := w.sim.VoiceStateOf(w.guild, w.sim.BotID()); ok {
		t.Fatal("bot still in voice")
	}

	// A scripted member joins: the bot hears about it.
	grant, err := w.sim.JoinVoice(w.alice, w.voice)
	if err != nil {
		t.Fatal(err)
	}
	f = g.read()
	var st wireVoiceState
	_ = json.Unmarshal(f.D, &st)
	if f.typ() != "VOICE_STATE_UPDATE" || st.UserID != w.alice || st.SessionID != grant.SessionID {
		t.Fatalf("scripted join: %s %s", f.typ(), f.D)
	}
	if err := w.sim.LeaveVoice(w.alice, w.voice); err != nil {
		t.Fatal(err)
	}
	if f := g.read(); !strings.Contains(string(f.D), `"channel_id":null`) {
		t.Fatalf("scripted leave: %s", f.D)
	}
}

func TestGatewayAnyPath(t *testing.T) {
	w := newWorld(t)
	g := dialGW(t, w.sim, "v=10&encoding=json")
	g.read()
	u := w.sim.GatewayURL() + "/some/path?v=10&encoding=json"
	ws, _, err := websocket.DefaultDialer.DialContext(t.Context(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	g2 := &rawGW{t: t, ws: ws}
	if f := g2.read(); f.Op != 10 {
		t.Fatalf("op %d", f.Op)
	}
}

// TestSlowClientIsDisconnected: a client that stops reading is cut off
// once its send queue is full; the simulator never blocks on it. It missed
// more than the replay window, so a Resume gets Invalid Session and a
// fresh Identify works.
func TestSlowClientIsDisconnected(t *testing.T) {
	w := newWorld(t, WithReplayLimit(1<<20)) // clamped below the send queue
	ctx := testCtx(t)
	g, r := identify(t, w.sim, w.sim.Token(), allIntents)
	_ = g // never read again
	big := strings.Repeat("x", 2000)
	for i := 0; w.sim.CountGateway(GatewayDisconnected) == 0; i++ {
		if i > 50*sendQueue {
			t.Fatal("a client that never reads was never disconnected")
		}
		if _, err := w.sim.Post(ctx, w.alice, w.text, big); err != nil {
			t.Fatal(err)
		}
	}
	g2 := dialGW(t, w.sim, "v=10")
	g2.read()
	g2.send(map[string]any{"op": 6, "d": map[string]any{"token": w.sim.Token(), "session_id": r.SessionID, "seq": 1}})
	if f := g2.read(); f.Op != 9 {
		t.Fatalf("resume from far behind: op %d, want 9", f.Op)
	}
	g2.send(identifyPayload(w.sim.Token(), allIntents, false))
	g2.until("READY")
}

// TestIdentifyDropsDetachedSessions: sessions abandoned by a re-identify
// stop receiving (and encoding) dispatches and can no longer be resumed.
func TestIdentifyDropsDetachedSessions(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	g, r := identify(t, w.sim, w.sim.Token(), allIntents)
	g.until("GUILD_CREATE")
	g.ws.Close()
	if _, err := waitGateway(ctx, w.sim, GatewayDisconnected, 1); err != nil {
		t.Fatal(err)
	}
	g2, _ := identify(t, w.sim, w.sim.Token(), allIntents)
	g2.until("GUILD_CREATE")
	w.sim.gw.mu.Lock()
	n := len(w.sim.gw.sessions)
	w.sim.gw.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
	g3 := dialGW(t, w.sim, "v=10")
	g3.read()
	g3.send(map[string]any{"op": 6, "d": map[string]any{"token": w.sim.Token(), "session_id": r.SessionID, "seq": 2}})
	if f := g3.read(); f.Op != 9 {
		t.Fatalf("resume of an abandoned session: op %d", f.Op)
	}
}
