package text_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord"
	"github.com/banterbot/banter/internal/logbuf"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/memory"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
	"github.com/banterbot/banter/store"
	"github.com/banterbot/banter/text"
)

// clock is a settable clock shared by the Discord simulator and the pipeline, so that tests can
// make old conversations.
type clock struct {
	real bool // the wall clock (benchmarks); Advance must not be used then

	mu sync.Mutex // guards following
	t  time.Time
}

func (c *clock) Now() time.Time {
	if c.real {
		return time.Now()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond) // strictly increasing
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	if c.real {
		panic("harness: Advance on the wall clock")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// harness runs the real text pipeline against both simulators: discordgo to the Discord
// simulator, openai-go (through llm) to the OpenAI simulator, SQLite in a temp dir.
type harness struct {
	t       testing.TB
	ctx     context.Context
	clock   *clock
	dsim    *discordsim.Server
	osim    *openaisim.Server
	cfg     atomic.Pointer[config.Config]
	dbPath  string
	logs    *logbuf.Buffer
	reg     *prometheus.Registry
	guild   discordsim.GuildID
	general discordsim.ChannelID
	alice   discordsim.UserID
	bob     discordsim.UserID

	// wrapStore, when set, wraps the store the pipeline is given (counting reads).
	wrapStore func(store.Store) store.Store
	// onSession, when set, runs on each new session after the pipeline's handlers are added
	// (a test's own handlers then run after the pipeline's).
	onSession func(*discordgo.Session)

	// the running bot
	st   *store.SQLite
	sess *discordgo.Session
	svc  *text.Service
	mem  *memory.Extractor // nil while memory is off
	stop func()
}

func newHarness(t testing.TB, mutate func(*config.Config), rules ...openaisim.Rule) *harness {
	t.Helper()
	return newHarnessWith(t, false, nil, mutate, rules...)
}

// newHarnessWith is newHarness with extra Discord simulator options. With realClock the
// simulator and the pipeline run on the wall clock, so that timestamps measure real time
// (benchmarks); otherwise on a settable clock that advances 1 ms per reading.
func newHarnessWith(t testing.TB, realClock bool, simOpts []discordsim.Option, mutate func(*config.Config), rules ...openaisim.Rule) *harness {
	t.Helper()
	return newHarnessSims(t, realClock, simOpts, nil, mutate, rules...)
}

// newHarnessSims is newHarnessWith with options of the OpenAI simulator too.
func newHarnessSims(t testing.TB, realClock bool, simOpts []discordsim.Option, osimOpts []openaisim.Option, mutate func(*config.Config), rules ...openaisim.Rule) *harness {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		tt.Parallel() // every harness has its own simulators and store; stopping discordgo takes 1 s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	h := &harness{t: t, ctx: ctx, clock: &clock{real: realClock, t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}, logs: &logbuf.Buffer{}}
	h.dsim = simtest.Serve(t, append([]discordsim.Option{discordsim.WithClock(h.clock.Now)}, simOpts...)...)
	h.osim = openaitest.Serve(t, append([]openaisim.Option{openaisim.WithRules(rules...)}, osimOpts...)...)
	h.guild = h.dsim.CreateGuild("Banter Test")
	h.general = h.dsim.CreateTextChannel(h.guild, "general")
	h.alice = h.dsim.CreateUser("alice")
	h.bob = h.dsim.CreateUser("bob")
	h.dsim.AddMember(h.guild, h.alice)
	h.dsim.AddMember(h.guild, h.bob)

	cfg := config.Default()
	cfg.Discord.APIURL = h.dsim.APIBaseURL()
	cfg.LLM.BaseURL = h.osim.BaseURL()
	cfg.LLM.MaxRetries = 1
	cfg.LLM.TimeoutSeconds = 5
	cfg.Activity.ReplyCoalesceWindowSeconds = 0
	cfg.Bot.Aliases = []string{"bants"}
	cfg.Bot.Personas["pirate"] = config.Persona{Prompt: "You are banter the pirate. Arr, speak like a pirate always.", Description: "a pirate"}
	cfg.Secrets.DiscordToken = h.dsim.Token()
	cfg.Secrets.OpenAIAPIKey = "sk-test"
	if mutate != nil {
		mutate(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h.cfg.Store(cfg)
	h.dbPath = filepath.Join(t.TempDir(), "banter.db")
	h.start()
	t.Cleanup(h.shutdown)
	return h
}

// start runs a bot process (store, discordgo session, llm client, engine, service).
func (h *harness) start() {
	t := h.t
	t.Helper()
	cfg := h.cfg.Load()
	logged := len(h.logs.String())
	st, err := store.Open(h.ctx, h.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.reg = prometheus.NewRegistry()
	client, err := llm.New(llm.Options{BaseURL: cfg.LLM.BaseURL, APIKey: cfg.Secrets.OpenAIAPIKey,
		Timeout: time.Duration(cfg.LLM.TimeoutSeconds) * time.Second, MaxRetries: cfg.LLM.MaxRetries,
		MaxRetryDelay: 2 * time.Second, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	dm := decision.NewMetrics(h.reg)
	engine := decision.NewTextEngine(text.Policy(cfg), decision.EngineOptions{Logger: logger, Metrics: dm,
		Classifier: decision.ClassifierFunc(client.Classify)})
	sess, err := discord.NewSession(discord.SessionOptions{Token: cfg.Secrets.DiscordToken, APIURL: cfg.Discord.APIURL})
	if err != nil {
		t.Fatal(err)
	}
	var pipelineStore store.Store = st
	if h.wrapStore != nil {
		pipelineStore = h.wrapStore(st)
	}
	extractor, embedder := h.newExtractor(cfg, pipelineStore, client, logger)
	svc, err := text.New(text.Options{
		Config: h.cfg.Load, Discord: sess, Store: pipelineStore, Model: client, Engine: engine, Memory: extractor, Embedder: embedder,
		Decisions: &decision.Recorder{Logger: logger, Metrics: dm},
		Logger:    logger, Metrics: text.NewMetrics(h.reg), Now: h.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	detach := svc.Attach(sess)
	if h.onSession != nil {
		h.onSession(sess)
	}
	removeInteractions := sess.AddHandler(func(s *discordgo.Session, ic *discordgo.InteractionCreate) {
		svc.HandleInteraction(h.ctx, s, ic.Interaction)
	})
	if err := sess.Open(); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ApplicationCommandBulkOverwrite(sess.State.User.ID, "", svc.Commands()); err != nil {
		t.Fatal(err)
	}
	h.st, h.sess, h.svc, h.mem = st, sess, svc, extractor
	// The GUILD_CREATE's catch-up of #general has run: what a test posts next reaches the
	// pipeline over the gateway, in order, not early through that catch-up.
	h.waitLogAfter(logged, time.Minute, `"msg":"catch_up"`, `"reason":"guild_create"`, `"channel_id":"`+string(h.general)+`"`)
	h.stop = func() {
		detach()
		removeInteractions()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := svc.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if extractor != nil {
			extractor.Close(ctx)
		}
		sess.Close()
		st.Close()
	}
}

func (h *harness) shutdown() {
	if h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

// restart stops the bot process and starts a new one on the same database.
func (h *harness) restart() {
	h.shutdown()
	h.start()
}

func (h *harness) post(u discordsim.UserID, content string, opts ...discordsim.PostOption) discordsim.Message {
	h.t.Helper()
	m, err := h.dsim.Post(h.ctx, u, h.general, content, opts...)
	if err != nil {
		h.t.Fatal(err)
	}
	return m
}

// waitReply waits for the bot's next message after `after` bot messages in total.
func (h *harness) waitBot(n int) discordsim.Message {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	for {
		var bot []discordsim.Message
		bot = h.botMessages()
		if len(bot) >= n {
			return bot[n-1]
		}
		select {
		case <-ctx.Done():
			h.t.Fatalf("bot sent %d messages, want %d; logs:\n%s", len(bot), n, h.tail())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// botMessages is what the bot has posted through REST so far (not interaction responses).
func (h *harness) botMessages() []discordsim.Message {
	var bot []discordsim.Message
	for _, m := range h.dsim.Sent() {
		if m.Author == h.dsim.BotID() && m.Origin != discordsim.OriginInteraction {
			bot = append(bot, m)
		}
	}
	return bot
}

// waitLog waits for a log line containing all fragments. The guard is long: a catch-up of
// hundreds of messages under -race on a loaded 2-core machine once took over 10 s to log.
func (h *harness) waitLog(fragments ...string) string {
	h.t.Helper()
	return h.waitLogAfter(0, 30*time.Second, fragments...)
}

// waitLogAfter is waitLog over the log written after offset off, with its own failure guard.
func (h *harness) waitLogAfter(off int, guard time.Duration, fragments ...string) string {
	h.t.Helper()
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(h.logs.String()[off:], "\n") {
			ok := line != ""
			for _, f := range fragments {
				ok = ok && strings.Contains(line, f)
			}
			if ok {
				return line
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("no log line with %q; logs:\n%s", fragments, h.tail())
	return ""
}

// waitStored waits until the bot's store holds message id in a state that satisfies ok:
// the store learns of messages from gateway events, asynchronously to what the test sees.
func (h *harness) waitStored(id discordsim.MessageID, what string, ok func(store.Message) bool) store.Message {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second) // a failure guard, not a timing assertion
	for {
		m, err := h.st.Message(h.ctx, string(id))
		if err == nil && ok(m) {
			return m
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			h.t.Fatalf("store: message %s: %v", id, err)
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("store never held message %s %s (last: %+v, %v); logs:\n%s", id, what, m, err, h.tail())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) tail() string {
	s := h.logs.String()
	if len(s) > 6000 {
		s = s[len(s)-6000:]
	}
	return s
}

// generations returns the recorded model requests that offered the reply tool.
func (h *harness) generations() []openaisim.Recorded {
	var out []openaisim.Recorded
	for _, r := range h.osim.Requests() {
		if len(r.Tools) > 0 {
			out = append(out, r)
		}
	}
	return out
}

func mention(u discordsim.UserID) string { return discordsim.MentionUser(u) }

// toolReply scripts a send_discord_message call.
func toolReply(pattern, mode, target, text string) openaisim.Rule {
	t := "null"
	if target != "" {
		t = `"` + target + `"`
	}
	return openaisim.Rule{Match: openaisim.Match{InputPattern: pattern}, Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{
		Name: "send_discord_message", Arguments: `{"mode":"` + mode + `","target_message_id":` + t + `,"text":` + quote(text) + `}`,
	}}}}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// reconfigure applies a change to the running configuration, as a live reload does.
func (h *harness) reconfigure(mutate func(*config.Config)) {
	h.t.Helper()
	cfg := *h.cfg.Load()
	mutate(&cfg)
	if err := cfg.Validate(); err != nil {
		h.t.Fatal(err)
	}
	h.cfg.Store(&cfg)
}

// initiativeIn makes ch an initiative channel where every threaded candidate replies.
func (h *harness) initiativeIn(ch discordsim.ChannelID) {
	h.reconfigure(func(c *config.Config) {
		c.Permissions.AllowInitiativeReplies = true
		c.Permissions.InitiativeChannelIDs = []string{string(ch)}
		c.Activity.InitiativeReplyShare = 1
	})
}

// metric returns the value of the counter name with exactly the given labels in the bot's
// registry (0 when absent).
func (h *harness) metric(name string, labels map[string]string) float64 {
	h.t.Helper()
	families, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue next
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
