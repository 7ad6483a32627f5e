package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
)

// Options configure RunStandalone. Every address must be on loopback.
type Options struct {
	// Addr serves REST and the gateway ("" is 127.0.0.1:0).
	Addr string
	// ControlAddr serves the control API ("" is 127.0.0.1:0).
	ControlAddr string
	// BotToken fixes the bot's token ("" generates one).
	BotToken string
	// IDTime, when set, pins the ids of the demo world: they are snowflakes
	// of this instant counting up by one, the same on every run.
	IDTime time.Time
	// WriteConfig, when set, is where a banter config for this simulator is
	// written (banter run -config FILE, with DISCORD_TOKEN set as printed).
	WriteConfig string
	// OpenAIURL, when set, goes into the written config as llm.baseUrl.
	OpenAIURL string
	// VoicePort, when set, pins the voice server's port (TCP and UDP on
	// 127.0.0.1); 0 picks free ones.
	VoicePort int
}

// loopback checks that addr is a loopback host:port, defaulting "".
func loopback(addr, what string) (string, error) {
	if addr == "" {
		return "127.0.0.1:0", nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("discordsim: standalone: %s %q: %w", what, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("discordsim: standalone: %s %q is not a loopback address", what, addr)
	}
	return addr, nil
}

// Listen listens on addr after checking it is a loopback address ("" is
// 127.0.0.1:0): the control API drives the whole simulated world and must
// not be reachable from elsewhere.
func Listen(addr string) (net.Listener, error) {
	a, err := loopback(addr, "control address")
	if err != nil {
		return nil, err
	}
	return net.Listen("tcp", a)
}

// RunStandalone runs a simulated Discord for people and out-of-process
// clients (`banter sim discord`): REST and gateway on o.Addr, a voice
// server next to it, a demo guild (#general, "Voice", member alice) and the
// control API on o.ControlAddr. It prints what a client needs to out and
// serves until ctx is done.
func RunStandalone(ctx context.Context, o Options, out io.Writer) error {
	addr, err := loopback(o.Addr, "address")
	if err != nil {
		return err
	}
	vs, err := voicesim.New(voicesim.Options{DAVE: true, Port: o.VoicePort})
	if err != nil {
		return fmt.Errorf("discordsim: standalone: %w", err)
	}
	defer vs.Close()
	opts := []discordsim.Option{discordsim.WithVoiceSim(vs)}
	if o.BotToken != "" {
		opts = append(opts, discordsim.WithBotToken(o.BotToken))
	}
	var seeding atomic.Bool
	if !o.IDTime.IsZero() {
		seeding.Store(true)
		opts = append(opts, discordsim.WithIDClock(func() time.Time {
			if seeding.Load() {
				return o.IDTime
			}
			return time.Now()
		}))
	}
	s := discordsim.New(opts...)
	if err := s.Start(addr); err != nil {
		return fmt.Errorf("discordsim: standalone: %w", err)
	}
	defer s.Close()
	g := s.CreateGuild("Sim Guild")
	general := s.CreateTextChannel(g, "general")
	voice := s.CreateVoiceChannel(g, "Voice")
	alice := s.CreateUser("alice")
	if err := s.AddMember(g, alice); err != nil {
		return err
	}
	seeding.Store(false)

	c := New(s, g)
	c.Name("alice", alice)
	defer c.Close()
	ln, err := Listen(o.ControlAddr)
	if err != nil {
		return fmt.Errorf("discordsim: standalone: control: %w", err)
	}
	srv := &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	ctlURL := "http://" + ln.Addr().String()

	if o.WriteConfig != "" {
		if err := os.WriteFile(o.WriteConfig, []byte(bantConfig(s, vs, o.OpenAIURL)), 0o600); err != nil {
			return fmt.Errorf("discordsim: standalone: -write-config: %w", err)
		}
	}
	if err := printStandalone(out, s, vs, ctlURL, o, g, general, voice, alice); err != nil {
		return fmt.Errorf("discordsim: standalone: %w", err)
	}
	<-ctx.Done()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("discordsim: standalone: %w", err)
	}
	return nil
}

// bantConfig is a banter config pointing at the simulator.
func bantConfig(s *discordsim.Server, vs *voicesim.Server, openaiURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `banter sim discord`: banter against the local Discord simulator.\n")
	fmt.Fprintf(&b, "# Run: DISCORD_TOKEN=%s banter run -config THIS_FILE\n", s.Token())
	fmt.Fprintf(&b, "discord:\n  apiUrl: %s\n  voiceCaFile: %s\n", s.APIBaseURL(), vs.CAFile())
	if openaiURL != "" {
		fmt.Fprintf(&b, "llm:\n  baseUrl: %s\n", openaiURL)
	}
	return b.String()
}

func printStandalone(out io.Writer, s *discordsim.Server, vs *voicesim.Server, ctlURL string, o Options,
	g discordsim.GuildID, general, voice discordsim.ChannelID, alice discordsim.UserID) error {
	_, err := fmt.Fprintf(out, `banter Discord simulator (loopback only; nothing reaches Discord)
  bot token        %s
  bot user id      %s (also the application id)
  API base URL     %s
                   discordgo: send https://discord.com/api/v9/... there (rewrite scheme+host)
                   discord.js: new Client({rest: {api: "%s/api"}})
  gateway URL      %s (what GET /api/v9/gateway and /api/v10/gateway/bot return)
  voice endpoint   %s (wss, voice gateway v8; UDP on the same host)
  voice CA         %s (NODE_EXTRA_CA_CERTS / a tls.Config RootCAs)
  control API      %s (HTTP/JSON; docs/simulator.md)
  guild            %s "Sim Guild"
  text channel     %s #general
  voice channel    %s "Voice"
  human user       %s alice, token %s
`, s.Token(), s.BotID(), s.APIBaseURL(), s.APIBaseURL(), s.GatewayURL(), vs.Endpoint(), vs.CAFile(), ctlURL,
		g, general, voice, alice, s.UserToken(alice))
	if err != nil {
		return err
	}
	if o.WriteConfig != "" {
		if _, err := fmt.Fprintf(out, "  banter config    %s\n  run banter       DISCORD_TOKEN=%s banter run -config %s\n",
			o.WriteConfig, s.Token(), o.WriteConfig); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintln(out, "serving until interrupted")
	return err
}
