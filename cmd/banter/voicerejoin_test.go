package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
	"github.com/banterbot/banter/sim/discord/world"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// rejoinBot is `banter run` as an OS process (osBot) with a voice server (DAVE on) and a voice
// channel in its guild; the members' speech is transcribed as voiceQuestion.
type rejoinBot struct {
	*osBot
	vc discordsim.ChannelID
}

// newRejoinBot starts the first process and returns once its voice service is up; setup (may be
// nil) runs on the simulators before it.
func newRejoinBot(t *testing.T, ctx context.Context, extra string, setup func(*botProcess)) *rejoinBot {
	t.Helper()
	vs := voicetest.Serve(t, voicesim.WithDAVE())
	r := &rejoinBot{}
	voiceCfg := "voice:\n"
	if !strings.Contains(extra, "joinGreetingWindowSeconds") {
		voiceCfg += "  joinGreetingWindowSeconds: 0 # whatever the bot says is an answer\n"
	}
	o := newOSBotWith(t, ctx, banterBinary(t), "  voiceCaFile: "+vs.CAFile()+"\n", voiceCfg+extra,
		func(b *botProcess) {
			r.vc = b.dsim.CreateVoiceChannel(b.guild, "Voice")
			for _, rule := range openaisim.SaidRules("voice question", voiceQuestion) {
				if err := b.osim.AddRule(rule); err != nil {
					t.Fatal(err)
				}
			}
			if setup != nil {
				setup(b)
			}
		}, discordsim.WithVoiceSim(vs))
	r.osBot = o
	t.Cleanup(func() {
		if err := o.stop(); err != nil {
			t.Errorf("bot: %v", err)
		}
	})
	// The voice service is up (it hears !join) once it has taken up the kept sessions.
	o.waitLine(t, ctx, 0, 1, "voice_rejoin_done", nil)
	return r
}

// botVoiceSession waits until the bot is in voice channel vc of guild g on a voice session
// other than not (the one of the process before a restart, "" for none) and returns it.
func (r *rejoinBot) botVoiceSession(t *testing.T, ctx context.Context, g discordsim.GuildID, vc discordsim.ChannelID, not string) string {
	t.Helper()
	wctx, cancel := guard(ctx)
	defer cancel()
	var id string
	err := r.dsim.Await(wctx, func() bool {
		st, ok := r.dsim.VoiceStateOf(g, r.dsim.BotID())
		id = st.SessionID
		return ok && st.Channel == vc && st.SessionID != not
	})
	if err != nil {
		t.Fatalf("the bot is not in %s on a new voice session: %v\n%s", vc, err, r.logs.String())
	}
	return id
}

// aliceIn has alice join voice channel vc as a simulated member (she leaves at cleanup).
func (r *rejoinBot) aliceIn(t *testing.T, ctx context.Context, vc discordsim.ChannelID) *voicesim.Member {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute) // the member's whole life in the test
	t.Cleanup(cancel)
	member, err := r.dsim.JoinVoiceMember(ctx, r.alice, vc, voicesim.MemberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(member.Leave)
	return member
}

// command has alice type text (!join, !leave) in the general channel and waits for the answer.
func (r *rejoinBot) command(t *testing.T, ctx context.Context, text, answer string) {
	t.Helper()
	m, err := r.dsim.Post(ctx, r.alice, r.ch, text)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := guard(ctx)
	defer cancel()
	if _, err := simtest.WaitMessage(wctx, r.dsim, func(x discordsim.Message) bool {
		return x.Author == r.dsim.BotID() && x.ReplyTo() == m.ID && x.Content == answer
	}); err != nil {
		t.Fatalf("%s: no %q: %v\n%s", text, answer, err, r.logs.String())
	}
}

// restart ends the process with sig, starts the next and returns the log offset of its start.
func (r *rejoinBot) restart(t *testing.T, ctx context.Context, sig syscall.Signal) int {
	t.Helper()
	if err := r.end(sig); err != nil {
		t.Fatalf("%v: %v\n%s", sig, err, r.logs.String())
	}
	off := r.logs.Len()
	r.start(t, ctx)
	return off
}

// TestVoiceSessionComesBackAfterRestart: alice, in the voice channel, types !join; the bot
// answers her spoken question. `banter run` is killed with SIGKILL and started again on the
// same database: the new process is back in the channel (a new voice session of the bot in the
// simulator's voice state) and answers her again. The same after a SIGTERM (the session ends
// "shutdown" and is kept). After !leave and a restart it stays out.
func TestVoiceSessionComesBackAfterRestart(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx := context.Background()
	r := newRejoinBot(t, ctx, "", nil)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	room := &voiceRoom{guild: r.guild, channel: r.vc, user: r.alice, member: r.aliceIn(t, ctx, r.vc)}
	speech := voiceQuestionPCM(t)
	logs := r.logs.String

	r.command(t, ctx, "!join", "Joined <#"+string(r.vc)+">.")
	first := r.botVoiceSession(t, ctx, r.guild, r.vc, "")
	room.ask(wctx, t, r.dsim, speech, logs)

	// kill -9: nothing ends the session; the next process takes it up.
	off := r.restart(t, ctx, syscall.SIGKILL)
	r.waitLine(t, ctx, off, 1, "voice_rejoin", map[string]string{"result": "rejoined", "guild_id": string(r.guild), "channel_id": string(r.vc)})
	second := r.botVoiceSession(t, ctx, r.guild, r.vc, first)
	room.ask(wctx, t, r.dsim, speech, logs)

	// SIGTERM: the session ends "shutdown", its record kept; the next process takes it up.
	off = r.logs.Len()
	off2 := r.restart(t, ctx, syscall.SIGTERM)
	r.waitLine(t, ctx, off, 1, "voice_session_end", map[string]string{"reason": "shutdown"})
	r.waitLine(t, ctx, off2, 1, "voice_rejoin", map[string]string{"result": "rejoined", "channel_id": string(r.vc)})
	r.botVoiceSession(t, ctx, r.guild, r.vc, second)
	room.ask(wctx, t, r.dsim, speech, logs)

	// !leave: the record goes; the next process stays out.
	r.command(t, ctx, "!leave", "Left the voice channel.")
	r.waitLine(t, ctx, off2, 1, "voice_session_end", map[string]string{"reason": "left"})
	off = r.restart(t, ctx, syscall.SIGTERM)
	r.waitLine(t, ctx, off, 1, "voice_rejoin_done", nil)
	for _, line := range r.logs.since(off) {
		if m := line.msg(); m == "voice_session_start" || m == "voice_rejoin" || (m == "voice_rejoin_done" && line["records"] != 0.0) {
			t.Errorf("after !leave and a restart: %v\n%s", line, logs())
		}
	}
	if st, in := r.dsim.VoiceStateOf(r.guild, r.dsim.BotID()); in {
		t.Errorf("after !leave and a restart the bot is in voice: %+v", st)
	}
}

// TestKeptVoiceSessionsDropped: kept sessions that cannot come back are logged and their records
// dropped at the next start: the bot may no longer connect to the channel (a member overwrite
// denying Connect, set while it was down), the channel is gone, the bot left the guild, the
// session is older than voice.maxSessionMinutes. None is joined, and the start after finds no
// record left.
func TestKeptVoiceSessionsDropped(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx := context.Background()
	var owned, old discordsim.GuildID
	var ownedText, ownedVoice, oldVoice discordsim.ChannelID
	r := newRejoinBot(t, ctx, "  maxSessionMinutes: 60\n", func(b *botProcess) {
		// The bot's own guild gives it every permission whatever the overwrites: alice's does not.
		owned = b.dsim.CreateGuildOwnedBy("alice's", b.alice)
		ownedText, ownedVoice = b.dsim.CreateTextChannel(owned, "general"), b.dsim.CreateVoiceChannel(owned, "Voice")
		old = b.dsim.CreateGuild("old")
		oldVoice = b.dsim.CreateVoiceChannel(old, "Voice")
	})
	r.aliceIn(t, ctx, ownedVoice)
	r.ch = ownedText
	r.command(t, ctx, "!join", "Joined <#"+string(ownedVoice)+">.")
	r.botVoiceSession(t, ctx, owned, ownedVoice, "")
	if err := r.end(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// While the bot is down: no Connect for it in the channel; records of a channel and a
	// guild that are gone and of a session joined two hours ago.
	deny := strconv.FormatUint(1<<20, 10) // CONNECT
	if err := r.dsim.SetChannelOverwrite(ownedVoice, world.Overwrite{ID: string(r.dsim.BotID()), Type: world.OverwriteMember, Allow: "0", Deny: deny}); err != nil {
		t.Fatal(err)
	}
	const goneGuild = "1000000000000000001"
	st, err := store.Open(ctx, r.storeDSN)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []store.VoiceSession{
		{GuildID: string(r.guild), ChannelID: "1000000000000000002", JoinedAt: time.Now()},
		{GuildID: goneGuild, ChannelID: "1000000000000000003", JoinedAt: time.Now()},
		{GuildID: string(old), ChannelID: string(oldVoice), JoinedAt: time.Now().Add(-2 * time.Hour)},
	} {
		if err := st.KeepVoiceSession(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	off := r.logs.Len()
	r.start(t, ctx)
	r.waitLine(t, ctx, off, 1, "voice_rejoin_done", nil)
	want := map[string]string{string(owned): "no_permission", string(r.guild): "channel_gone", goneGuild: "guild_gone", string(old): "expired"}
	got := map[string]string{}
	for _, line := range r.logs.since(off) {
		switch line.msg() {
		case "voice_rejoin":
			got[line.str("guild_id")] = line.str("result") + "/" + line.str("record")
		case "voice_session_start":
			t.Errorf("a kept session that cannot come back was joined: %v", line)
		}
	}
	for g, result := range want {
		if got[g] != result+"/dropped" {
			t.Errorf("guild %s: voice_rejoin %q, want %q/dropped", g, got[g], result)
		}
	}
	off = r.restart(t, ctx, syscall.SIGTERM)
	r.waitLine(t, ctx, off, 1, "voice_rejoin_done", map[string]string{})
	for _, line := range r.logs.since(off) {
		if line.msg() == "voice_rejoin" {
			t.Errorf("a dropped record came back: %v", line)
		}
	}
	if t.Failed() {
		t.Logf("bot log:\n%s", r.logs.String())
	}
}

// TestKeptVoiceSessionWaitsForItsGuild: the process starts while the guild of its kept session
// is in an outage (READY lists it unavailable, no GUILD_CREATE). The rejoin waits for it; when
// the outage lasts past the wait, the record is kept (failed: transient) and the start after
// the outage rejoins; when the guild comes back during the wait, the rejoin goes on at once.
func TestKeptVoiceSessionWaitsForItsGuild(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx := context.Background()
	r := newRejoinBot(t, ctx, "", nil)
	r.aliceIn(t, ctx, r.vc)
	r.command(t, ctx, "!join", "Joined <#"+string(r.vc)+">.")
	session := r.botVoiceSession(t, ctx, r.guild, r.vc, "")
	outage := func(on bool) {
		t.Helper()
		if err := r.dsim.SetGuildAvailable(r.guild, !on); err != nil {
			t.Fatal(err)
		}
	}

	// The outage outlasts the wait: failed, the record kept.
	if err := r.end(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	outage(true)
	off := r.logs.Len()
	r.start(t, ctx)
	r.waitLine(t, ctx, off, 1, "voice_rejoin_waiting", map[string]string{"guild_id": string(r.guild)})
	r.waitLine(t, ctx, off, 1, "voice_rejoin", map[string]string{"result": "failed", "record": "kept"})
	if st, in := r.dsim.VoiceStateOf(r.guild, r.dsim.BotID()); in {
		t.Fatalf("in voice while its guild is out: %+v", st)
	}

	// The next start, the outage ends while the rejoin waits: it rejoins.
	off = r.restart(t, ctx, syscall.SIGTERM)
	r.waitLine(t, ctx, off, 1, "voice_rejoin_waiting", map[string]string{"guild_id": string(r.guild)})
	outage(false)
	r.waitLine(t, ctx, off, 1, "voice_rejoin", map[string]string{"result": "rejoined", "channel_id": string(r.vc)})
	r.botVoiceSession(t, ctx, r.guild, r.vc, session)
}

// greetings are the bot's join greetings (spoken, skipped or cut) logged after offset off.
func (r *rejoinBot) greetings(off int) []logLine {
	var out []logLine
	for _, line := range r.logs.since(off) {
		if _, ok := line["greeting_attempt"]; ok {
			out = append(out, line)
		}
	}
	return out
}

// waitGreeting waits for a join greeting logged after offset off.
func (r *rejoinBot) waitGreeting(t *testing.T, ctx context.Context, off int) {
	t.Helper()
	g, cancel := guard(ctx)
	defer cancel()
	if !r.logs.wait(g, func() bool { return len(r.greetings(off)) > 0 }) {
		t.Fatalf("no join greeting:\n%s", r.logs.String())
	}
}

// TestRejoinedSessionDoesNotGreet: with the join greeting on and alice in the voice channel, a
// !join greets the room. After a restart the session comes back without a greeting: alice's
// question is the first thing the bot answers, no greeting is logged before or with it, and no
// prompt of the new process says it just joined. A fresh !join in that process greets again.
func TestRejoinedSessionDoesNotGreet(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx := context.Background()
	r := newRejoinBot(t, ctx, "  joinGreetingWindowSeconds: 120\n", nil)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	room := &voiceRoom{guild: r.guild, channel: r.vc, user: r.alice, member: r.aliceIn(t, ctx, r.vc)}
	join := "Joined <#" + string(r.vc) + ">."

	off := r.logs.Len()
	r.command(t, ctx, "!join", join)
	first := r.botVoiceSession(t, ctx, r.guild, r.vc, "")
	r.waitGreeting(t, ctx, off)

	off = r.restart(t, ctx, syscall.SIGKILL)
	r.waitLine(t, ctx, off, 1, "voice_rejoin", map[string]string{"result": "rejoined", "channel_id": string(r.vc)})
	r.botVoiceSession(t, ctx, r.guild, r.vc, first)
	gens := len(r.osim.RequestsFor(openaisim.EndpointResponses))
	room.ask(wctx, t, r.dsim, voiceQuestionPCM(t), r.logs.String)
	g, gcancel := guard(ctx)
	defer gcancel()
	answered := func() bool {
		for _, line := range r.logs.since(off) {
			if line.msg() == "stt_pipeline_reply_spoken" && line.str("turn_id") != "" {
				return true
			}
		}
		return false
	}
	if !r.logs.wait(g, answered) {
		t.Fatalf("no answer to alice's question after the rejoin:\n%s", r.logs.String())
	}
	// A greeting would have started as soon as alice was connected, before her question was
	// heard, and ended (logged) before the answer could start.
	if gr := r.greetings(off); len(gr) > 0 {
		t.Errorf("the rejoined session greeted: %v", gr)
	}
	for _, req := range r.osim.RequestsFor(openaisim.EndpointResponses)[gens:] {
		if strings.Contains(req.Prompt, "just joined") {
			t.Errorf("a prompt of the rejoined session says it just joined:\n%s", req.Prompt)
		}
	}

	r.command(t, ctx, "!leave", "Left the voice channel.")
	off = r.logs.Len()
	r.command(t, ctx, "!join", join)
	r.waitGreeting(t, ctx, off)
}

// TestKeptVoiceSessionsRejoinOnTheirOwn: two kept sessions, the older one's guild in an outage
// at start, and a voice.autoJoin channel in a third guild. The other guild's session comes back
// and the autoJoin channel is joined while the first guild is still out (its rejoin waiting,
// no voice_rejoin for it yet); once its outage ends, it comes back too.
func TestKeptVoiceSessionsRejoinOnTheirOwn(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx := context.Background()
	var other, auto discordsim.GuildID
	var otherVC, autoVC discordsim.ChannelID
	r := newRejoinBot(t, ctx, "", func(b *botProcess) {
		other, auto = b.dsim.CreateGuild("other"), b.dsim.CreateGuild("auto")
		otherVC, autoVC = b.dsim.CreateVoiceChannel(other, "Voice"), b.dsim.CreateVoiceChannel(auto, "Voice")
	})
	if err := r.end(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, r.storeDSN)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []store.VoiceSession{ // oldest first: the guild in an outage
		{GuildID: string(r.guild), ChannelID: string(r.vc), RequestedBy: string(r.alice), JoinedAt: time.Now().Add(-2 * time.Minute)},
		{GuildID: string(other), ChannelID: string(otherVC), RequestedBy: string(r.alice), JoinedAt: time.Now().Add(-time.Minute)},
	} {
		if err := st.KeepVoiceSession(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	cfg, err := os.ReadFile(r.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	autoJoin := fmt.Sprintf("voice:\n  autoJoin:\n    - guildId: %q\n      channelId: %q\n", auto, autoVC)
	if err := os.WriteFile(r.cfgPath, []byte(strings.Replace(string(cfg), "voice:\n", autoJoin, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.dsim.SetGuildAvailable(r.guild, false); err != nil {
		t.Fatal(err)
	}

	off := r.logs.Len()
	r.start(t, ctx)
	r.waitLine(t, ctx, off, 1, "voice_rejoin_waiting", map[string]string{"guild_id": string(r.guild)})
	r.waitLine(t, ctx, off, 1, "voice_rejoin", map[string]string{"guild_id": string(other), "result": "rejoined"})
	r.botVoiceSession(t, ctx, other, otherVC, "")
	r.botVoiceSession(t, ctx, auto, autoVC, "")
	for _, line := range r.logs.since(off) {
		if line.msg() == "voice_rejoin" && line.str("guild_id") == string(r.guild) {
			t.Fatalf("the guild in an outage settled before the others came back: %v\n%s", line, r.logs.String())
		}
	}
	if err := r.dsim.SetGuildAvailable(r.guild, true); err != nil {
		t.Fatal(err)
	}
	r.waitLine(t, ctx, off, 1, "voice_rejoin", map[string]string{"guild_id": string(r.guild), "result": "rejoined"})
	r.botVoiceSession(t, ctx, r.guild, r.vc, "")
	r.waitLine(t, ctx, off, 1, "voice_rejoin_done", nil)
}
