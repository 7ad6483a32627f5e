package discordsim

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// An outage of a guild (SetGuildAvailable false) is Discord's: the guild is unavailable to
// every gateway session, and nothing of it reaches them, whatever it is.

// TestOutageSendsNothingOfTheGuild: during an outage the bot's session gets nothing of the
// guild, not even what is its own: no INTERACTION_CREATE (a member cannot run a command there:
// ErrGuildUnavailable), no VOICE_STATE_UPDATE or VOICE_SERVER_UPDATE for a moderator's move of
// the bot, and its own op 4 (join or leave) is ignored, as for a guild it is not in. The
// GUILD_CREATE that ends the outage carries the voice states as they are then; afterwards
// commands and voice signalling work again.
func TestOutageSendsNothingOfTheGuild(t *testing.T) {
	backend := &fakeVoice{endpoint: "localhost:8443"}
	w := newWorld(t, WithVoiceBackend(backend)) // the bot owns the guild
	other := w.sim.CreateVoiceChannel(w.guild, "Other")
	bot := "Bot " + w.sim.Token()
	rest(t, w.sim, "PUT", "/api/v10/applications/"+string(w.sim.ApplicationID())+"/commands", bot,
		[]map[string]any{{"name": "ping", "description": "Ping!"}}, nil)
	g, _ := identify(t, w.sim, w.sim.Token(), allIntents)
	g.until("GUILD_CREATE")
	join := func(ch any) {
		g.send(map[string]any{"op": 4, "d": map[string]any{"guild_id": w.guild, "channel_id": ch, "self_mute": false, "self_deaf": false}})
	}
	join(w.voice)
	g.until("VOICE_STATE_UPDATE")
	g.until("VOICE_SERVER_UPDATE")
	grants := len(backend.grants())

	must(t, w.sim.SetGuildAvailable(w.guild, false))
	if f := g.read(); f.typ() != "GUILD_DELETE" {
		t.Fatalf("outage began with %s %s, want GUILD_DELETE", f.typ(), f.D)
	}
	if _, err := w.sim.InvokeCommand(w.alice, w.text, "ping"); !errors.Is(err, ErrGuildUnavailable) {
		t.Errorf("a command during the outage: %v, want ErrGuildUnavailable", err)
	}
	must(t, w.sim.MoveVoice(w.guild, w.sim.BotID(), other)) // a moderator's move: the bot hears nothing of it
	join(w.voice)                                           // ignored, as is a leave
	join(nil)
	// The connection handles its frames in order: the heartbeat's ACK comes after whatever
	// the op 4s made, so it must be the next frame.
	g.send(map[string]any{"op": 1, "d": nil})
	if f := g.read(); f.Op != 11 {
		t.Fatalf("during the outage the bot got op %d %s %s, want nothing before the heartbeat ACK", f.Op, f.typ(), f.D)
	}
	if vs, ok := w.sim.VoiceStateOf(w.guild, w.sim.BotID()); !ok || vs.Channel != other {
		t.Errorf("the bot's voice state after its op 4s during the outage: %+v (in voice %v), want in %s", vs, ok, other)
	}

	must(t, w.sim.SetGuildAvailable(w.guild, true))
	f := g.read()
	var gc struct {
		VoiceStates []wireVoiceState `json:"voice_states"`
	}
	must(t, json.Unmarshal(f.D, &gc))
	if f.typ() != "GUILD_CREATE" || len(gc.VoiceStates) != 1 || gc.VoiceStates[0].ChannelID == nil || *gc.VoiceStates[0].ChannelID != other {
		t.Fatalf("outage ended with %s %s, want GUILD_CREATE with the bot in %s", f.typ(), f.D, other)
	}
	if _, err := w.sim.InvokeCommand(w.alice, w.text, "ping"); err != nil {
		t.Fatalf("a command after the outage: %v", err)
	}
	g.until("INTERACTION_CREATE")
	join(w.voice)
	if st := decodeVoiceState(t, g.until("VOICE_STATE_UPDATE")); st.ChannelID == nil || *st.ChannelID != w.voice {
		t.Errorf("op 4 after the outage: %+v, want the bot in %s", st, w.voice)
	}
	g.until("VOICE_SERVER_UPDATE")
	if n := len(backend.grants()); n != grants+2 { // the move's grant, then the rejoin's
		t.Errorf("%d voice grants since the outage began, want 2 (the move and the join after it)", n-grants)
	}
}

// TestOutageWhileDisconnected: a session resumed after an outage that began and ended while
// it was disconnected is replayed what it missed, the outage's GUILD_DELETE and GUILD_CREATE,
// and nothing that happened in the guild during the outage (never sent, so never kept for
// replay): the GUILD_CREATE carries the state.
func TestOutageWhileDisconnected(t *testing.T) {
	w := newWorld(t)
	ctx := testCtx(t)
	rest(t, w.sim, "PUT", "/api/v10/applications/"+string(w.sim.ApplicationID())+"/commands", "Bot "+w.sim.Token(),
		[]map[string]any{{"name": "ping", "description": "Ping!"}}, nil)
	g, r := identify(t, w.sim, w.sim.Token(), allIntents)
	last := *g.until("GUILD_CREATE").S
	g.ws.Close()
	if _, err := waitGateway(ctx, w.sim, GatewayDisconnected, 1); err != nil {
		t.Fatal(err)
	}
	must(t, w.sim.SetGuildAvailable(w.guild, false))
	if _, err := w.sim.Post(ctx, w.alice, w.text, "during"); err != nil {
		t.Fatal(err)
	}
	_, err := w.sim.JoinVoice(w.alice, w.voice)
	must(t, err)
	must(t, w.sim.SetNick(w.guild, w.alice, "al"))
	if _, err := w.sim.InvokeCommand(w.alice, w.text, "ping"); !errors.Is(err, ErrGuildUnavailable) {
		t.Errorf("a command during the outage: %v, want ErrGuildUnavailable", err)
	}
	must(t, w.sim.SetGuildAvailable(w.guild, true))

	g2 := dialGW(t, w.sim, "v=10&encoding=json")
	g2.read() // Hello
	g2.send(map[string]any{"op": 6, "d": map[string]any{"token": "Bot " + w.sim.Token(), "session_id": r.SessionID, "seq": last}})
	var got []string
	var create json.RawMessage
	for {
		f := g2.read()
		if f.typ() == "RESUMED" {
			break
		}
		got = append(got, f.typ())
		if f.typ() == "GUILD_CREATE" {
			create = f.D
		}
	}
	if strings.Join(got, ",") != "GUILD_DELETE,GUILD_CREATE" {
		t.Fatalf("replayed %v, want the outage's GUILD_DELETE and GUILD_CREATE only", got)
	}
	var gc struct {
		Members     []wireMember     `json:"members"`
		VoiceStates []wireVoiceState `json:"voice_states"`
	}
	must(t, json.Unmarshal(create, &gc))
	nick := ""
	for _, m := range gc.Members {
		if m.User.ID == w.alice && m.Nick != nil {
			nick = *m.Nick
		}
	}
	if len(gc.VoiceStates) != 1 || gc.VoiceStates[0].UserID != w.alice || nick != "al" {
		t.Errorf("the GUILD_CREATE after the outage: voice states %+v, alice's nick %q; want alice in voice as al", gc.VoiceStates, nick)
	}
}
