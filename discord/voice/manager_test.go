package voice

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	"github.com/banterbot/banter/sim/discord/voicesim"
	"github.com/banterbot/banter/sim/discord/voicesim/voicetest"
	"github.com/bwmarrin/discordgo"
)

// rewrite sends discordgo's REST calls to the simulator.
type rewrite struct{ base *url.URL }

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = r.base.Scheme, r.base.Host, r.base.Host
	return http.DefaultTransport.RoundTrip(req)
}

// world is the main-gateway simulator wired to the voice simulator, with a
// real discordgo v0.29.0 session logged in as the bot.
type world struct {
	main         *discordsim.Server
	voice        *voicesim.Server
	dg           *discordgo.Session
	guild        string
	chanA, chanB string
	alice        discordsim.UserID
	connects     chan *Conn
	mgr          *Manager
	metrics      *Metrics
}

func newWorld(t *testing.T, cfg ManagerConfig) *world {
	t.Helper()
	v := voicetest.Serve(t)
	main := simtest.Serve(t, discordsim.WithVoiceSim(v))
	w := &world{main: main, voice: v, connects: make(chan *Conn, 16), metrics: newMetrics()}
	g := main.CreateGuild("Voice Guild")
	w.guild = string(g)
	w.chanA = string(main.CreateVoiceChannel(g, "A"))
	w.chanB = string(main.CreateVoiceChannel(g, "B"))
	w.alice = main.CreateUser("alice")
	if err := main.AddMember(g, w.alice); err != nil {
		t.Fatal(err)
	}
	dg, err := discordgo.New("Bot " + main.Token())
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(main.APIBaseURL())
	dg.Client = &http.Client{Transport: rewrite{base}, Timeout: 10 * time.Second}
	dg.Identify.Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildVoiceStates
	dg.LogLevel = -1
	ready := make(chan struct{}, 1)
	dg.AddHandler(func(_ *discordgo.Session, _ *discordgo.GuildCreate) {
		select {
		case ready <- struct{}{}:
		default:
		}
	})
	if err := dg.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dg.Close() })
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		t.Fatal("no GUILD_CREATE")
	}
	w.dg = dg
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(v.CACertPEM())
	cfg.UserID = dg.State.User.ID
	cfg.Conn.TLSConfig = &tls.Config{RootCAs: pool}
	cfg.Conn.Logger = testLogger(t)
	cfg.Conn.Metrics = w.metrics
	cfg.Conn.ResumeBackoff = 20 * time.Millisecond
	cfg.OnConnect = func(guildID string, c *Conn) {
		if guildID != w.guild {
			t.Errorf("OnConnect for guild %s", guildID)
		}
		w.connects <- c
	}
	w.mgr = NewManager(dg, cfg)
	t.Cleanup(func() { w.mgr.Close() })
	return w
}

func (w *world) nextConnect(t *testing.T, within time.Duration) *Conn {
	t.Helper()
	select {
	case c := <-w.connects:
		return c
	case <-time.After(within):
		t.Fatalf("no new connection within %v", within)
		return nil
	}
}

func (w *world) noConnect(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case c := <-w.connects:
		t.Fatalf("unexpected new connection (token %s)", c.cfg.Token)
	case <-time.After(within):
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestManagerJoinMoveLeave joins through real discordgo signalling, hears a
// member, moves (a new token and a fresh connection, never the old one),
// and leaves.
func TestManagerJoinMoveLeave(t *testing.T) {
	w := newWorld(t, ManagerConfig{})
	ctx := testContext(t)
	c1, err := w.mgr.Join(ctx, w.guild, w.chanA)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.nextConnect(t, time.Second); got != c1 || c1.State() != StateReady {
		t.Fatalf("OnConnect %p, Join %p, state %v", got, c1, c1.State())
	}
	if again, err := w.mgr.Join(ctx, w.guild, w.chanA); err != nil || again != c1 {
		t.Fatalf("re-Join of the same channel: %p %v", again, err)
	}

	member, err := w.main.JoinVoiceMember(ctx, w.alice, discordsim.ChannelID(w.chanA), voicesim.MemberOptions{FrameInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st := nextStream(t, c1, string(w.alice))
	if err := member.PlayOpus(ctx, opusFrames(t, 3)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case <-st.Frames():
		case <-ctx.Done():
			t.Fatal("no audio from the member")
		}
	}

	c2, err := w.mgr.Join(ctx, w.guild, w.chanB)
	if err != nil {
		t.Fatal(err)
	}
	if c2 == c1 || c2.cfg.Token == c1.cfg.Token || c2.cfg.ChannelID != w.chanB {
		t.Fatalf("move reused the connection or token: %s vs %s", c2.cfg.Token, c1.cfg.Token)
	}
	select {
	case <-c1.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("old connection still open after the move")
	}
	if w.mgr.Conn(w.guild) != c2 {
		t.Error("Manager.Conn is not the new connection")
	}

	if err := w.mgr.Leave(ctx, w.guild); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(c2.Err(), ErrClosed) {
		t.Errorf("after Leave: %v", c2.Err())
	}
	waitFor(t, "bot out of voice", func() bool {
		_, in := w.main.VoiceStateOf(discordsim.GuildID(w.guild), discordsim.UserID(w.dg.State.User.ID))
		return !in
	})
	member.Leave()
}

// TestManagerClosePolicies drives each close-code class through the
// simulator and checks what the Manager does next.
func TestManagerClosePolicies(t *testing.T) {
	tests := []struct {
		name  string
		codes []int // closes applied one after another, each to the then-current connection
		// want per close: true = a fresh connection follows (new token).
		fresh []bool
	}{
		{"session-invalid-4006-rejoins", []int{4006}, []bool{true}},
		{"session-timeout-4009-rejoins", []int{4009}, []bool{true}},
		{"rate-limited-4021-backs-off", []int{4021}, []bool{true}},
		{"server-not-found-4011-backs-off", []int{4011}, []bool{true}},
		{"disconnected-4014-stays-down", []int{4014}, []bool{false}},
		{"call-terminated-4022-stays-down", []int{4022}, []bool{false}},
		{"client-bug-4020-once-then-stop", []int{4020, 4020}, []bool{true, false}},
		{"drop-resumes-same-conn", []int{1006}, []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, ManagerConfig{Backoff: 100 * time.Millisecond})
			ctx := testContext(t)
			c, err := w.mgr.Join(ctx, w.guild, w.chanA)
			if err != nil {
				t.Fatal(err)
			}
			w.nextConnect(t, time.Second)
			bot := w.dg.State.User.ID
			for i, code := range tt.codes {
				start := time.Now()
				if code == 1006 {
					err = w.voice.DropVoice(bot)
				} else {
					err = w.voice.CloseVoice(bot, code)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !tt.fresh[i] {
					w.noConnect(t, 400*time.Millisecond)
					if code == 1006 {
						waitFor(t, "resumed", func() bool { return c.State() == StateReady && c.Err() == nil })
					} else if c.Err() == nil {
						t.Fatalf("connection alive after %d", code)
					}
					continue
				}
				next := w.nextConnect(t, 5*time.Second)
				if next.cfg.Token == c.cfg.Token {
					t.Fatalf("token reused after %d", code)
				}
				if code == 4021 || code == 4011 {
					if el := time.Since(start); el < 100*time.Millisecond {
						t.Errorf("rejoined after %v, before the back-off", el)
					}
				}
				c = next
			}
			if tt.codes[0] == 4014 {
				// A later move still connects fresh.
				c2, err := w.mgr.Join(ctx, w.guild, w.chanB)
				if err != nil || c2.cfg.ChannelID != w.chanB {
					t.Fatalf("move after 4014: %v", err)
				}
			}
		})
	}
}

// TestManagerWaitsForEndpoint feeds the handlers directly: a null endpoint
// (voice server not allocated yet) must not connect, a token must be used
// once, and updates for other users or guilds are ignored.
func TestManagerWaitsForEndpoint(t *testing.T) {
	v := voicetest.Serve(t)
	gw := &scriptedGateway{}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(v.CACertPEM())
	connects := make(chan *Conn, 4)
	m := NewManager(gw, ManagerConfig{UserID: testBot, Conn: Config{TLSConfig: &tls.Config{RootCAs: pool}},
		OnConnect: func(_ string, c *Conn) { connects <- c }})
	defer m.Close()
	ctx := testContext(t)
	res := make(chan error, 1)
	go func() { _, err := m.Join(ctx, testGuild, testChannel); res <- err }()
	waitFor(t, "op 4", func() bool { return gw.calls() == 1 })
	sess := voicesim.Session{GuildID: testGuild, ChannelID: testChannel, UserID: testBot, SessionID: "s1", Token: "t1"}
	if err := v.Authorize(sess); err != nil {
		t.Fatal(err)
	}
	state := func(user, channel string) *discordgo.VoiceStateUpdate {
		return &discordgo.VoiceStateUpdate{VoiceState: &discordgo.VoiceState{GuildID: testGuild, ChannelID: channel, UserID: user, SessionID: "s1"}}
	}
	m.onVoiceState(state(testHuman, testChannel)) // someone else
	m.onVoiceServer(&discordgo.VoiceServerUpdate{GuildID: testGuild, Token: "t1", Endpoint: ""})
	m.onVoiceState(state(testBot, testChannel))
	m.onVoiceServer(&discordgo.VoiceServerUpdate{GuildID: "999", Token: "t9", Endpoint: v.Endpoint()})
	select {
	case <-connects:
		t.Fatal("connected without an endpoint")
	case <-time.After(200 * time.Millisecond):
	}
	m.onVoiceServer(&discordgo.VoiceServerUpdate{GuildID: testGuild, Token: "t1", Endpoint: v.Endpoint()})
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	c := <-connects
	if c.cfg.Token != "t1" || c.cfg.SessionID != "s1" {
		t.Fatalf("connected with %s/%s", c.cfg.SessionID, c.cfg.Token)
	}
	// The same token again (a duplicate event) does not reconnect.
	m.onVoiceServer(&discordgo.VoiceServerUpdate{GuildID: testGuild, Token: "t1", Endpoint: v.Endpoint()})
	select {
	case <-connects:
		t.Fatal("reconnected with a used token")
	case <-time.After(200 * time.Millisecond):
	}
}

// scriptedGateway records Op 4 calls; the test delivers events itself.
type scriptedGateway struct {
	mu     sync.Mutex
	n      int
	closed bool // behave like discordgo with its WebSocket closed: panic
}

func (g *scriptedGateway) ChannelVoiceJoinManual(_, _ string, _, _ bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		var ws *struct{ sync.Mutex }
		ws.Lock() // nil dereference, as discordgo's s.wsConn write does
	}
	g.n++
	return nil
}

func (g *scriptedGateway) AddHandler(any) func() { return func() {} }

func (g *scriptedGateway) calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// TestManagerGatewayClosed: Join on a main gateway that is not open returns
// an error instead of panicking.
func TestManagerGatewayClosed(t *testing.T) {
	m := NewManager(&scriptedGateway{closed: true}, ManagerConfig{UserID: testBot})
	defer m.Close()
	if _, err := m.Join(testContext(t), testGuild, testChannel); err == nil || !strings.Contains(err.Error(), "not open") {
		t.Fatalf("Join = %v", err)
	}
}

// TestManagerFollowsMove: with OnMove set, a move of the bot by someone else (the bot's own
// VOICE_STATE_UPDATE in another channel, then VOICE_SERVER_UPDATE) is followed: OnMove
// reports it, and a fresh connection to the new channel is made with the move's token.
// A disconnect (channel null) is no move: nothing is reported and Channel says "".
func TestManagerFollowsMove(t *testing.T) {
	type move struct{ from, to string }
	moves := make(chan move, 4)
	w := newWorld(t, ManagerConfig{OnMove: func(_, from, to string) { moves <- move{from, to} }})
	ctx := testContext(t)
	c1, err := w.mgr.Join(ctx, w.guild, w.chanA)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.nextConnect(t, 5*time.Second); got != c1 {
		t.Fatalf("OnConnect %p, Join %p", got, c1)
	}
	bot := discordsim.UserID(w.dg.State.User.ID)
	if err := w.main.MoveVoice(discordsim.GuildID(w.guild), bot, discordsim.ChannelID(w.chanB)); err != nil {
		t.Fatal(err)
	}
	select {
	case mv := <-moves:
		if mv.from != w.chanA || mv.to != w.chanB {
			t.Fatalf("OnMove %+v, want %s → %s", mv, w.chanA, w.chanB)
		}
	case <-ctx.Done():
		t.Fatal("the move was not reported")
	}
	c2 := w.nextConnect(t, 5*time.Second)
	if c2 == c1 || c2.cfg.ChannelID != w.chanB || c2.cfg.Token == c1.cfg.Token {
		t.Fatalf("after the move: connection to %s with token %s (old %s)", c2.cfg.ChannelID, c2.cfg.Token, c1.cfg.Token)
	}
	if got := w.mgr.Channel(w.guild); got != w.chanB {
		t.Errorf("Channel = %q, want %s", got, w.chanB)
	}

	if err := w.main.MoveVoice(discordsim.GuildID(w.guild), bot, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Channel empty after the disconnect", func() bool { return w.mgr.Channel(w.guild) == "" })
	select {
	case mv := <-moves:
		t.Errorf("a disconnect reported as a move: %+v", mv)
	default:
	}
}
