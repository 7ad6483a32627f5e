package discordsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/banterbot/banter/sim/discord/voicesim"
)

// RunStandalone runs a simulated Discord for people and out-of-process
// clients (the lead wires it as `banter sim discord`). It listens on addr,
// which must be a loopback address ("" means 127.0.0.1:0), starts a voice
// server next to it, creates a demo guild with a text and a voice channel
// and a human user, prints the bot token, the URLs and the voice CA path
// to out, and serves until ctx is done.
func RunStandalone(ctx context.Context, addr string, out io.Writer) error {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("discordsim: standalone: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("discordsim: standalone: %q is not a loopback address", addr)
	}
	vs, err := voicesim.New(voicesim.Options{DAVE: true})
	if err != nil {
		return fmt.Errorf("discordsim: standalone: %w", err)
	}
	defer vs.Close()
	s := New(WithVoiceSim(vs))
	if err := s.Start(addr); err != nil {
		return err
	}
	defer s.Close()

	g := s.CreateGuild("Sim Guild")
	general := s.CreateTextChannel(g, "general")
	voice := s.CreateVoiceChannel(g, "Voice")
	alice := s.CreateUser("alice")
	if err := s.AddMember(g, alice); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, `banter Discord simulator (loopback only; nothing reaches Discord)
  bot token        %s
  bot user id      %s (also the application id)
  API base URL     %s
                   discordgo: send https://discord.com/api/v9/... there (rewrite scheme+host)
                   discord.js: new Client({rest: {api: "%s/api"}})
  gateway URL      %s (what GET /api/v9/gateway and /api/v10/gateway/bot return)
  voice endpoint   %s (wss, voice gateway v8; UDP on the same host)
  voice CA         %s (NODE_EXTRA_CA_CERTS / a tls.Config RootCAs)
  guild            %s "Sim Guild"
  text channel     %s #general
  voice channel    %s "Voice"
  human user       %s alice, token %s
serving until interrupted
`, s.Token(), s.BotID(), s.APIBaseURL(), s.APIBaseURL(), s.GatewayURL(), vs.Endpoint(), vs.CAFile(),
		g, general, voice, alice, s.UserToken(alice))
	if err != nil {
		return fmt.Errorf("discordsim: standalone: %w", err)
	}
	<-ctx.Done()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("discordsim: standalone: %w", err)
	}
	return nil
}
