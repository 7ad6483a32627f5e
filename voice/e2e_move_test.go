package voice_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
	simworld "github.com/banterbot/banter/sim/discord/world"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// moderator adds a member with Move Members and Mute Members (and Connect) to the world's guild and returns
// a function that sends, as that member's client does, PATCH /guilds/{g}/members/{bot} with
// body.
func (w *world) moderator(t *testing.T) func(body map[string]any) {
	t.Helper()
	mod := w.dsim.CreateUser("mod")
	if err := w.dsim.AddMember(w.guild, mod); err != nil {
		t.Fatal(err)
	}
	role, err := w.dsim.CreateRoleWithPermissions(w.guild, "movers",
		strconv.FormatUint(simworld.PermMoveMembers|simworld.PermMuteMembers|simworld.PermConnect|simworld.PermViewChannel, 10))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.dsim.GiveRole(w.guild, mod, role); err != nil {
		t.Fatal(err)
	}
	return func(body map[string]any) {
		t.Helper()
		b, _ := json.Marshal(body)
		url := w.dsim.APIBaseURL() + "/api/v10/guilds/" + string(w.guild) + "/members/" + w.botID
		req, err := http.NewRequestWithContext(w.ctx, http.MethodPatch, url, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", w.dsim.UserToken(mod))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PATCH %s: %s", body, resp.Status)
		}
	}
}

// waitDAVEIn waits until channel ch's DAVE group holds n members and is settled.
func (w *world) waitDAVEIn(ch discordsim.ChannelID, n int) {
	w.t.Helper()
	for {
		st := w.vsim.DAVE(string(w.guild), string(ch))
		if st.Version == 1 && st.Established && !st.Busy && len(st.Members) == n {
			return
		}
		select {
		case <-w.ctx.Done():
			w.t.Fatalf("DAVE group of %s not ready: %+v", ch, st)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestMovedByModerator: alice talks with the bot in channel A (joined by !join); a moderator
// drags the bot to channel B (PATCH channel_id, as a moderator's client does). The session
// goes on in B (voice_session_moved, counted; no voice_session_end): bob asks there and hears
// the answer, whose prompt still holds alice's words from A (the conversation kept); alice,
// left in A, hears nothing more; the kept session's record names B, so a restart rejoins
// there. (Before, the session ended "disconnected" and its record was dropped.)
func TestMovedByModerator(t *testing.T) {
	t.Parallel()
	w, st := keptWorld(t)
	move := w.moderator(t)
	b := w.dsim.CreateVoiceChannel(w.guild, "Elsewhere")
	alice := w.member("alice")
	w.commandJoin(t)
	w.waitDAVEIn(w.vc, 2)
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	if err := alice.WaitHeard(w.ctx, w.botID, 10); err != nil {
		t.Fatalf("alice not answered in A: %v", err)
	}
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)

	bob, err := w.dsim.JoinVoiceMember(w.ctx, w.users["bob"], b, voicesim.MemberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bob.Leave)
	move(map[string]any{"channel_id": string(b)})
	ev := w.waitEvent("voice_session_moved")
	if ev["from"] != string(w.vc) || ev["to"] != string(b) {
		t.Fatalf("voice_session_moved %v, want from %s to %s", ev, w.vc, b)
	}
	w.waitDAVEIn(b, 2)
	heardInA := len(alice.Heard(w.botID))
	w.osim.QueueTranscripts("hey banter, and what about tomorrow?")
	w.play(bob, "hey-banter-weather")
	if err := bob.WaitHeard(w.ctx, w.botID, 10); err != nil {
		t.Fatalf("bob not answered in B: %v", err)
	}
	w.waitLogs(2, `"msg":"stt_pipeline_reply_spoken"`)

	if ch := w.svc.Channel(string(w.guild)); ch != string(b) {
		t.Errorf("the session is in %q, want %s", ch, b)
	}
	if n := len(w.logs.Events("voice_session_end")); n != 0 {
		t.Errorf("%d voice_session_end after the move, want none", n)
	}
	if n := metricValue(t, w.reg, "banter_voice_session_moves_total", "followed"); n != 1 {
		t.Errorf("moves followed = %v, want 1", n)
	}
	var prompt string
	for _, r := range w.osim.RequestsFor(openaisim.EndpointResponses) {
		if strings.Contains(r.Prompt, "what about tomorrow") {
			prompt = r.Prompt
		}
	}
	if !strings.Contains(prompt, "what's the weather like today") {
		t.Errorf("bob's answer was asked without alice's words from A (conversation lost):\n%s", prompt)
	}
	if n := len(alice.Heard(w.botID)); n != heardInA {
		t.Errorf("alice, left in A, heard %d more frames from the bot after the move", n-heardInA)
	}
	want := []string{string(w.guild) + "/" + string(b) + "/" + string(w.users["alice"])}
	for got := kept(t, st); !slices.Equal(got, want); got = kept(t, st) {
		select { // the record is written beside the session loop
		case <-w.ctx.Done():
			t.Fatalf("records after the move: %v, want %v", got, want)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// botMuted reports whether the bot's gateway state says it is server-muted.
func (w *world) botMuted() bool {
	st := w.sess.State
	g, err := st.Guild(string(w.guild))
	if err != nil {
		return false
	}
	st.RLock()
	defer st.RUnlock()
	for _, vs := range g.VoiceStates {
		if vs.UserID == w.botID {
			return vs.Mute
		}
	}
	return false
}

// TestServerMutedBotStaysQuiet: a moderator server-mutes the bot (PATCH mute). alice asks it
// by name: the turn is denied (server_muted) before any model is asked to answer, and nothing
// is spoken. Unmuted, the bot answers her next question.
func TestServerMutedBotStaysQuiet(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil, genRule("Loud and clear."))
	moderate := w.moderator(t)
	alice := w.member("alice")
	w.join()
	moderate(map[string]any{"mute": true})
	for !w.botMuted() {
		select {
		case <-w.ctx.Done():
			t.Fatal("the bot's mute never reached its gateway state")
		case <-time.After(20 * time.Millisecond):
		}
	}
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	ev := w.waitEvent("stt_pipeline_reply_denied")
	if ev["reason"] != "server_muted" {
		t.Fatalf("denied with %v, want server_muted", ev["reason"])
	}
	if n := len(w.osim.RequestsFor(openaisim.EndpointResponses)); n != 0 {
		t.Errorf("%d generation or classification requests while server-muted, want none", n)
	}
	if n := len(alice.Heard(w.botID)); n != 0 {
		t.Errorf("alice heard %d frames from the muted bot", n)
	}

	moderate(map[string]any{"mute": false})
	for w.botMuted() {
		select {
		case <-w.ctx.Done():
			t.Fatal("the bot's unmute never reached its gateway state")
		case <-time.After(20 * time.Millisecond):
		}
	}
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	if err := alice.WaitHeard(w.ctx, w.botID, 10); err != nil {
		t.Fatalf("not answered once unmuted: %v", err)
	}
}
