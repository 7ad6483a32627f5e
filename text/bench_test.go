package text_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/llm"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/text"
)

// Load of the message-to-send benchmark: the 100 messages/s across 50 channels.
const (
	benchChannels = 50
	benchRate     = 100
	benchModel    = 20 * time.Millisecond // injected model latency, subtracted from the results
)

// loadResult is the per-message overhead of one run: time from the message being posted to the
// reply being created in the simulator, minus the latency the OpenAI simulator injected.
type loadResult struct {
	overheads []time.Duration
	coalesced int // messages answered together with a later one of their channel
}

func (r loadResult) quantile(q float64) time.Duration {
	s := slices.Clone(r.overheads)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// runLoad posts n addressed messages at benchRate, round-robin over the channels, as alice, and
// measures each reply's overhead from the simulators' own timestamps and injected latency. A
// channel's messages that arrive while its previous reply is still being made are answered
// together (coalesced), so the run ends when every channel's last message is answered.
func runLoad(b testing.TB, dsim *discordsim.Server, osim *openaisim.Server, channels []discordsim.ChannelID, alice discordsim.UserID, n int) loadResult {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	posted := make(map[discordsim.MessageID]time.Time, n)
	last := map[discordsim.MessageID]bool{}
	lastOf := map[discordsim.ChannelID]discordsim.MessageID{}
	tick := time.NewTicker(time.Second / benchRate)
	defer tick.Stop()
	for i := range n {
		<-tick.C
		ch := channels[i%len(channels)]
		m, err := dsim.Post(ctx, alice, ch, fmt.Sprintf("banter, question number %d?", i))
		if err != nil {
			b.Fatal(err)
		}
		posted[m.ID] = m.Timestamp
		lastOf[ch] = m.ID
	}
	for _, id := range lastOf {
		last[id] = true
	}
	var replies []discordsim.Message
	for {
		replies = replies[:0]
		answered := 0
		for _, m := range dsim.Sent() {
			if m.Author == dsim.BotID() {
				replies = append(replies, m)
				if last[m.ReplyTo()] {
					answered++
				}
			}
		}
		if answered == len(last) {
			break
		}
		select {
		case <-ctx.Done():
			b.Fatalf("%d of %d channels answered", answered, len(last))
		case <-time.After(5 * time.Millisecond):
		}
	}
	var injected time.Duration
	reqs := osim.Requests()
	for _, r := range reqs {
		injected += r.Injected.Total()
	}
	injected /= time.Duration(max(1, len(reqs)))
	var res loadResult
	for _, r := range replies {
		at, ok := posted[r.ReplyTo()]
		if !ok {
			continue // an earlier call's reply (a benchmark may run several rounds on one bot)
		}
		res.overheads = append(res.overheads, r.Timestamp.Sub(at)-injected)
	}
	res.coalesced = n - len(res.overheads)
	return res
}

func benchWorld(b testing.TB, dsim *discordsim.Server) ([]discordsim.ChannelID, discordsim.UserID) {
	_, chans, alice := benchGuild(dsim)
	return chans, alice
}

// benchGuild is benchWorld with the guild's id.
func benchGuild(dsim *discordsim.Server) (discordsim.GuildID, []discordsim.ChannelID, discordsim.UserID) {
	g := dsim.CreateGuild("bench")
	var chans []discordsim.ChannelID
	for i := range benchChannels {
		chans = append(chans, dsim.CreateTextChannel(g, fmt.Sprintf("c%d", i)))
	}
	alice := dsim.CreateUser("alice")
	dsim.AddMember(g, alice)
	return g, chans, alice
}

// benchLimits raise the simulator's global REST limit from Discord's default 50 requests/s
// (which no bot can exceed, so 100 replies/s needs a raised limit, as large bots get from
// Discord) so that the load measures banter rather than the rate limiter.
var benchLimits = []discordsim.Option{discordsim.WithGlobalLimit(2000, time.Second)}

var benchRule = openaisim.Rule{
	Reply:   openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "send_discord_message", Arguments: `{"mode":"reply","target_message_id":null,"text":"Good question!"}`}}},
	Latency: openaisim.Latency{TimeToFirstToken: benchModel},
}

// BenchmarkMessageToSend measures banter's own overhead per addressed message (post → reply,
// minus the injected model latency) at 100 messages/s across 50 channels, against a baseline
// bot measured in the same run that does only the unavoidable I/O: on MESSAGE_CREATE it calls
// the same model through the same llm client and posts the answer as a reply. Each iteration is
// one message. The coalescing window is 0: it is a deliberate wait, not overhead.
//
//	go test -run '^$' -bench MessageToSend -benchtime 500x ./text
func BenchmarkMessageToSend(b *testing.B) {
	n := max(b.N, 50)

	// Baseline: a minimal bot on fresh simulators.
	bdsim := simtest.Serve(b, benchLimits...)
	bosim := openaitest.Serve(b, openaisim.WithRules(benchRule))
	bchans, balice := benchWorld(b, bdsim)
	client, err := llm.New(llm.Options{BaseURL: bosim.BaseURL(), APIKey: "sk"})
	if err != nil {
		b.Fatal(err)
	}
	sess, err := discord.NewSession(discord.SessionOptions{Token: bdsim.Token(), APIURL: bdsim.APIBaseURL()})
	if err != nil {
		b.Fatal(err)
	}
	sess.SyncEvents = false // the minimal bot answers concurrently
	sess.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) {
		if m.Author.ID == s.State.User.ID {
			return
		}
		res, err := client.Generate(context.Background(), llm.GenerateRequest{Model: "gpt-5-mini", Instructions: "bench",
			Messages: []llm.Message{{Role: llm.RoleUser, Content: m.Content}}, Tools: []llm.Tool{text.SendMessageTool}})
		if err != nil || len(res.ToolCalls) == 0 {
			b.Error(res, err)
			return
		}
		var args struct{ Text string }
		if err := json.Unmarshal([]byte(res.ToolCalls[0].Arguments), &args); err != nil {
			b.Error(err)
			return
		}
		if _, err := s.ChannelMessageSendComplex(m.ChannelID, &discordgo.MessageSend{Content: args.Text, Reference: m.Reference()}); err != nil {
			b.Error(err)
		}
	})
	if err := sess.Open(); err != nil {
		b.Fatal(err)
	}
	base := runLoad(b, bdsim, bosim, bchans, balice, n)
	sess.Close()

	// banter, with its store, decision engine, queue, context and dispatch.
	b.ResetTimer()
	// On the wall clock: the test harness's settable clock advances 1 ms per reading, which
	// made the "overhead" a count of clock readings rather than time.
	h := newHarnessWith(b, true, benchLimits, func(c *config.Config) {
		c.Activity.ReplyCoalesceWindowSeconds = 0
		c.Activity.MaxPromptsPerHour = 100000
		c.Activity.ExplicitReservePromptsPerHour = 0
	}, benchRule)
	chans, alice := benchWorld(b, h.dsim)
	got := runLoad(b, h.dsim, h.osim, chans, alice, n)
	b.StopTimer()

	med, p99 := got.quantile(0.5), got.quantile(0.99)
	bmed := base.quantile(0.5)
	b.ReportMetric(float64(med.Microseconds())/1000, "overhead-median-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "overhead-p99-ms")
	b.ReportMetric(float64(bmed.Microseconds())/1000, "baseline-median-ms")
	b.ReportMetric(float64(med)/float64(max(bmed, time.Microsecond)), "x-baseline")
	b.ReportMetric(float64(got.coalesced), "coalesced-msgs")
	if med > 5*time.Millisecond {
		b.Logf("median overhead %v exceeds the 5 ms target", med)
	}
}
