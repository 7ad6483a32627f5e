package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/audio/wav"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// voiceQuestion is what members say to the bot in the multi-process test's voice channels.
const voiceQuestion = "hey banter, what's the weather like today?"

// TestMultiProcess runs three banter processes that share one bot's four shards (0-1, 2 and 3)
// against the sharded Discord simulator, its voice server (DAVE on) and one PostgreSQL: every
// addressed message in every guild is answered exactly once; every process joins the
// voice.autoJoin channel of its own guild (and leaves the others' to them), and a member asking
// it by voice hears an answer; one process is killed with SIGKILL mid-way and restarted, the
// messages its guilds received meanwhile are answered after the restart and it rejoins its voice
// channel and answers there again; the global slash commands are registered once, by the
// process running shard 0; the processes together draw no 429 from Discord's REST limits.
func TestMultiProcess(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	ctx, dsn, bin := clusterTest(t)

	// max_concurrency 4: each shard has its own identify key, so the processes start together.
	vs := voicetest.Serve(t, voicesim.WithDAVE())
	dsim := simtest.Serve(t, discordsim.WithShards(4, 4), discordsim.WithIdentifySpacing(time.Second), discordsim.WithVoiceSim(vs))
	osim := openaitest.Serve(t)
	for _, r := range openaisim.SaidRules("voice question", voiceQuestion) {
		if err := osim.AddRule(r); err != nil {
			t.Fatal(err)
		}
	}
	alice := dsim.CreateUser("alice")
	const guildCount, shardCount = 8, 4
	shardOf := func(g discordsim.GuildID) int { return shardOfGuild(g, shardCount) }
	guilds, channels := shardGuilds(dsim, alice, shardCount, guildCount/shardCount)
	procs := []*banterProcess{{name: "a", shardIDs: "0-1"}, {name: "b", shardIDs: "2"}, {name: "c", shardIDs: "3"}}
	// A voice channel in a guild of each process, and a member there to talk to the bot.
	voiceRooms := map[*banterProcess]*voiceRoom{}
	var autoJoin strings.Builder
	for i, p := range procs {
		first, _, _ := strings.Cut(p.shardIDs, "-")
		for _, g := range guilds {
			if strconv.Itoa(shardOf(g)) == first {
				r := &voiceRoom{guild: g, channel: dsim.CreateVoiceChannel(g, "voice"), user: dsim.CreateUser("speaker" + strconv.Itoa(i))}
				dsim.AddMember(g, r.user)
				voiceRooms[p] = r
				fmt.Fprintf(&autoJoin, "    - guildId: \"%s\"\n      channelId: \"%s\"\n", g, r.channel)
				break
			}
		}
	}

	cfg := clusterConfig(dsim, shardCount, dsn, "  voiceCaFile: "+vs.CAFile()+"\n",
		"voice:\n  joinGreetingWindowSeconds: 0 # whatever the bot says is an answer to the question\n  autoJoin:\n"+autoJoin.String())
	c := newCluster(t, bin, cfg, dsim, osim.BaseURL(), procs)
	logs := c.logs
	for _, p := range procs {
		c.start(p)
	}
	identified := 0
	if _, err := simtest.WaitGateway(ctx, dsim, discordsim.GatewayIdentified, shardCount); err != nil {
		t.Fatalf("not every shard identified: %v\n%s", err, logs())
	}
	identified = shardCount

	var addressed []discordsim.Message
	post := func(g discordsim.GuildID, text string) {
		t.Helper()
		m, err := dsim.Post(ctx, alice, channels[g], text)
		if err != nil {
			t.Fatal(err)
		}
		addressed = append(addressed, m)
	}
	answeredAll := func(want []discordsim.Message) {
		t.Helper()
		for _, m := range want {
			if _, err := simtest.WaitMessage(ctx, dsim, func(r discordsim.Message) bool {
				return r.Author == dsim.BotID() && r.ReplyTo() == m.ID
			}); err != nil {
				t.Fatalf("%q in guild on shard %d not answered: %v\n%s", m.Content, shardOf(m.GuildID), err, logs())
			}
		}
	}

	// Round 1: every process answers its own guilds, in text and in its voice channel.
	for i, g := range guilds {
		post(g, fmt.Sprintf("hey banter, round one question %d?", i))
	}
	answeredAll(addressed)
	speech := voiceQuestionPCM(t)
	for _, p := range procs {
		r := voiceRooms[p]
		r.waitSession(ctx, t, dsim, p, 1, logs)
		var err error
		if r.member, err = dsim.JoinVoiceMember(ctx, r.user, r.channel, voicesim.MemberOptions{}); err != nil {
			t.Fatal(err)
		}
		defer r.member.Leave()
	}
	for _, p := range procs {
		voiceRooms[p].ask(ctx, t, dsim, speech, logs)
	}

	// Process b (shard 2) dies without a goodbye; its guilds keep talking meanwhile.
	victim := procs[1]
	c.kill(victim)
	var gap []discordsim.Message
	for i, g := range guilds {
		post(g, fmt.Sprintf("hey banter, round two question %d?", i))
		gap = append(gap, addressed[len(addressed)-1])
	}
	var others, victims []discordsim.Message
	for _, m := range gap {
		if shardOf(m.GuildID) == 2 {
			victims = append(victims, m)
		} else {
			others = append(others, m)
		}
	}
	answeredAll(others)
	c.start(victim)
	if _, err := simtest.WaitGateway(ctx, dsim, discordsim.GatewayIdentified, identified+1); err != nil {
		t.Fatalf("the restarted process did not identify: %v\n%s", err, logs())
	}
	answeredAll(victims) // by the catch-up after the restarted shard's READY
	// The restarted process joins its voice channel again and answers there.
	r := voiceRooms[victim]
	r.waitSession(ctx, t, dsim, victim, 2, logs)
	r.ask(ctx, t, dsim, speech, logs)
	for _, p := range procs {
		for _, line := range p.lines() {
			if line.msg() == "voice_autojoin_failed" {
				t.Errorf("process %s failed an autoJoin (a guild of another process's shard?)\n%s", p.name, logs())
			}
		}
	}

	// Stop every process cleanly; after that no reply can still arrive.
	c.stop(ctx)
	replies := botReplies(dsim)
	once, dup, lost := 0, 0, 0
	for _, m := range addressed {
		switch n := replies[m.ID]; {
		case n == 1:
			once++
		case n > 1:
			dup++
		default:
			lost++
		}
	}
	tooMany, registrations := 0, 0
	for _, r := range dsim.RESTLog() {
		if r.Status == 429 {
			tooMany++
		}
		if r.Route == "PUT /applications/{application_id}/commands" {
			registrations++
		}
	}
	// The global slash commands belong to the application: the process running shard 0
	// registers them, once; the others (and the restarted one) leave them alone.
	var names []string
	for _, c := range dsim.Commands("") {
		names = append(names, c.Name)
	}
	if registrations != 1 || !slices.Contains(names, "join") {
		t.Errorf("global slash commands registered %d times (want once, by the process of shard 0); commands: %v", registrations, names)
	}
	fmt.Printf("multi-process: processes=%d guilds=%d addressed=%d answered_once=%d duplicates=%d lost=%d 429s=%d\n",
		len(procs), guildCount, len(addressed), once, dup, lost, tooMany)
	if once != len(addressed) || dup != 0 || lost != 0 || tooMany != 0 {
		t.Errorf("want every addressed message answered exactly once and no 429\n%s", logs())
	}
	if len(victims) == 0 {
		t.Error("no guild on the killed process's shard: the restart was not tested")
	}
}

// voiceRoom is a process's voice channel in the multi-process test, with the member who talks
// to the bot there.
type voiceRoom struct {
	guild   discordsim.GuildID
	channel discordsim.ChannelID
	user    discordsim.UserID
	member  *voicesim.Member
}

// waitSession waits until the bot is in the room's channel and the process's log shows its
// n-th voice session in the guild (voice.autoJoin at start, then after a restart).
func (r *voiceRoom) waitSession(ctx context.Context, t *testing.T, dsim *discordsim.Server, p *banterProcess, n int, logs func() string) {
	t.Helper()
	for {
		started := 0
		for _, line := range p.lines() {
			if line.msg() == "voice_session_start" && strings.Contains(fmt.Sprint(line), string(r.guild)) {
				started++
			}
		}
		if st, in := dsim.VoiceStateOf(r.guild, dsim.BotID()); in && st.Channel == r.channel && started >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no voice session %d in guild %s: %v\n%s", n, r.guild, ctx.Err(), logs())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ask has the room's member ask the bot by voice and waits until the member hears an answer.
func (r *voiceRoom) ask(ctx context.Context, t *testing.T, dsim *discordsim.Server, speech []int16, logs func() string) {
	t.Helper()
	before := len(r.member.Heard(string(dsim.BotID())))
	if err := r.member.PlayPCM(ctx, speech); err != nil {
		t.Fatal(err)
	}
	if err := r.member.WaitHeard(ctx, string(dsim.BotID()), before+25); err != nil {
		t.Fatalf("no voice answer in guild %s: %v\n%s", r.guild, err, logs())
	}
}

// voiceQuestionPCM is the recorded question (48 kHz stereo) the members play.
func voiceQuestionPCM(t *testing.T) []int16 {
	t.Helper()
	data, err := os.ReadFile("testdata/hey-banter-weather.wav")
	if err != nil {
		t.Fatal(err)
	}
	samples, format, err := wav.Decode(nil, data)
	if err != nil || format.Rate != 48000 || format.Channels != 2 {
		t.Fatalf("fixture: %v %+v", err, format)
	}
	return samples
}
