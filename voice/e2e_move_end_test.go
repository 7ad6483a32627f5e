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

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/discord/perms"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	simworld "github.com/banterbot/banter/sim/discord/world"
)

// setAFKChannel makes ch the guild's AFK channel as an admin's client does (PATCH
// /guilds/{g} afk_channel_id, as a member with Manage Guild) and waits until the bot's
// gateway state has it (GUILD_UPDATE).
func (w *world) setAFKChannel(t *testing.T, ch discordsim.ChannelID) {
	t.Helper()
	admin := w.dsim.CreateUser("admin")
	if err := w.dsim.AddMember(w.guild, admin); err != nil {
		t.Fatal(err)
	}
	role, err := w.dsim.CreateRoleWithPermissions(w.guild, "admins", strconv.FormatUint(simworld.PermManageGuild, 10))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.dsim.GiveRole(w.guild, admin, role); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"afk_channel_id": ch})
	req, err := http.NewRequestWithContext(w.ctx, http.MethodPatch, w.dsim.APIBaseURL()+"/api/v10/guilds/"+string(w.guild), bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", w.dsim.UserToken(admin))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH guild afk_channel_id: %s", resp.Status)
	}
	w.waitState(t, "the AFK channel", func(st *discordgo.State) bool {
		g, err := st.Guild(string(w.guild))
		if err != nil {
			return false
		}
		st.RLock()
		defer st.RUnlock()
		return g.AfkChannelID == string(ch)
	})
}

// waitState waits until ok holds of the bot's gateway state.
func (w *world) waitState(t *testing.T, what string, ok func(*discordgo.State) bool) {
	t.Helper()
	for !ok(w.sess.State) {
		select {
		case <-w.ctx.Done():
			t.Fatalf("%s never reached the bot's gateway state", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// checkMovedOut checks what a move that ends the session leaves (reason moved_afk or
// moved_no_speak, the bot moved from the world's channel to ch): voice_session_leave with
// from and to, the end logged and counted by reason, the move counted, the kept session's
// record dropped (a restart does not rejoin), the bot out of voice.
func (w *world) checkMovedOut(t *testing.T, reason string, to discordsim.ChannelID, records func() []string) {
	t.Helper()
	end := w.waitEventWith("voice_session_end", "reason", reason)
	if end["channel_id"] != string(w.vc) {
		t.Errorf("voice_session_end channel_id %v, want %s (the session never went on in %s)", end["channel_id"], w.vc, to)
	}
	leave := w.waitEventWith("voice_session_leave", "reason", reason)
	if leave["from"] != string(w.vc) || leave["to"] != string(to) {
		t.Errorf("voice_session_leave %v, want from %s to %s", leave, w.vc, to)
	}
	if n := len(w.logs.Events("voice_session_moved")); n != 0 {
		t.Errorf("%d voice_session_moved, want none: the move was not followed", n)
	}
	if n := metricValue(t, w.reg, "banter_voice_session_moves_total", reason); n != 1 {
		t.Errorf("moves %s = %v, want 1", reason, n)
	}
	if n := metricValue(t, w.reg, "banter_voice_session_ends_total", reason); n != 1 {
		t.Errorf("session ends %s = %v, want 1", reason, n)
	}
	if got := records(); len(got) != 0 {
		t.Errorf("records after %s: %v, want none (a restart would rejoin)", reason, got)
	}
	if ch := w.svc.Channel(string(w.guild)); ch != "" {
		t.Errorf("the guild still has a session in %s", ch)
	}
	for { // the bot leaves the channel it was moved to
		if _, in := w.dsim.VoiceStateOf(w.guild, discordsim.UserID(w.botID)); !in {
			break
		}
		select {
		case <-w.ctx.Done():
			t.Fatalf("the bot stayed in voice after %s", reason)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestMovedIntoAFKChannel: a moderator drags the bot (joined by !join) into the guild's AFK
// channel (set by an admin: PATCH /guilds/{g}, GUILD_UPDATE). The bot takes the hint: the
// session ends moved_afk (voice_session_leave from/to, counted as a move and as an end), its
// record is dropped so a restart does not bring it back, and it leaves voice.
func TestMovedIntoAFKChannel(t *testing.T) {
	t.Parallel()
	w, st := keptWorld(t)
	move := w.moderator(t)
	afk := w.dsim.CreateVoiceChannel(w.guild, "AFK")
	w.member("alice")
	w.commandJoin(t)
	w.setAFKChannel(t, afk)
	move(map[string]any{"channel_id": string(afk)})
	w.checkMovedOut(t, "moved_afk", afk, func() []string { return kept(t, st) })
}

// TestMovedIntoChannelWithoutSpeak: in a guild the bot does not own, a channel's overwrite
// denies the bot Speak. A moderator drags the bot (joined by !join) there: it could only
// listen, so the session ends moved_no_speak (logged, counted, record dropped) and the bot
// leaves voice.
func TestMovedIntoChannelWithoutSpeak(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	w := keptWorldWith(t, worldOptions{kept: st, owner: "owner"})
	move := w.moderator(t)
	quiet := w.dsim.CreateVoiceChannel(w.guild, "Listen only")
	deny := simworld.Overwrite{ID: w.botID, Type: simworld.OverwriteMember, Allow: "0", Deny: strconv.FormatUint(simworld.PermSpeak, 10)}
	if err := w.dsim.SetChannelOverwrite(quiet, deny); err != nil {
		t.Fatal(err)
	}
	w.waitState(t, "the overwrite", func(st *discordgo.State) bool {
		p, ok := perms.InChannel(st, w.botID, string(quiet))
		return ok && p&discordgo.PermissionVoiceConnect != 0 && p&discordgo.PermissionVoiceSpeak == 0
	})
	w.member("alice")
	w.commandJoin(t)
	move(map[string]any{"channel_id": string(quiet)})
	w.checkMovedOut(t, "moved_no_speak", quiet, func() []string { return kept(t, st) })
}

// TestJoinWhileDisconnectSettles: the voice server closes the bot's connection 4014 with no
// VOICE_STATE_UPDATE yet, so the session waits up to moveSettle to learn whether it was moved
// or kicked (voice_connection_lost, reason disconnected). alice types !join in her channel,
// the session's, meanwhile. The !join does not take the settling session for a live one: it
// ends it and joins afresh, so once the old session's end is logged the bot is in the channel
// on a new session that answers her, and the record names the new session. (Before, the
// !join answered "Joined" and did nothing, and the session then ended disconnected and left.)
func TestJoinWhileDisconnectSettles(t *testing.T) {
	t.Parallel()
	w, st := keptWorld(t)
	alice := w.member("alice")
	w.commandJoin(t)
	first := kept(t, st)
	if err := w.vsim.CloseVoice(w.botID, 4014); err != nil {
		t.Fatal(err)
	}
	w.waitLog(`"msg":"voice_connection_lost"`, `"reason":"disconnected"`, `"close_code":4014`)
	q, err := w.dsim.Post(w.ctx, w.users["alice"], w.text, "!join")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitMessage(w.ctx, w.dsim, func(m discordsim.Message) bool {
		return m.Reference != nil && m.Reference.MessageID == q.ID && strings.HasPrefix(m.Content, "Joined")
	}); err != nil {
		t.Fatalf("!join: %v", err)
	}
	w.waitLog(`"msg":"voice_session_end"`)
	if ch := w.svc.Channel(string(w.guild)); ch != string(w.vc) {
		t.Fatalf("after the old session's end the bot's session is in %q, want %s", ch, w.vc)
	}
	if got := kept(t, st); !slices.Equal(got, first) {
		t.Errorf("records after the !join: %v, want %v", got, first)
	}
	w.waitLogs(2, `"msg":"voice_session_start"`)
	w.waitDAVEIn(w.vc, 2)
	before := len(alice.Heard(w.botID))
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	if err := alice.WaitHeard(w.ctx, w.botID, before+10); err != nil {
		t.Fatalf("the new session did not answer: %v", err)
	}
}
