// Package discord is banter's glue to Discord's main gateway and REST API through discordgo:
// building a session pointed at the configured API host with the intents banter needs. The
// voice transport, which discordgo cannot provide, lives in discord/voice and discord/dave.
package discord

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Intents are the gateway intents banter identifies with: guilds, guild messages, message
// content (privileged: enable it in the Developer Portal) and guild voice states.
const Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages |
	discordgo.IntentMessageContent | discordgo.IntentsGuildVoiceStates

// DefaultAPIURL is Discord's own API host.
const DefaultAPIURL = "https://discord.com"

// SessionOptions configure NewSession.
type SessionOptions struct {
	// Token is the bot token, with or without the "Bot " prefix.
	Token string
	// APIURL is the API host (scheme://host[:port]); empty means Discord. discordgo builds its
	// URLs for discord.com; requests are redirected to this host with their paths unchanged, and
	// the gateway URL comes from the host's GET /gateway answer.
	APIURL string
	// HTTPTimeout bounds each REST request; zero means 30 s.
	HTTPTimeout time.Duration
	// RESTPerSecond caps this process's REST requests (its share of the bot's global limit when
	// several processes share a token: ProcessRESTShare); zero leaves it to discordgo.
	RESTPerSecond float64
	// RESTMetrics counts the REST 429s (nil: not counted).
	RESTMetrics *RESTMetrics
}

// NewSession returns a discordgo session that is not yet open.
func NewSession(opts SessionOptions) (*discordgo.Session, error) {
	s, _, err := newSession(opts)
	return s, err
}

// newSession is NewSession that also returns the REST budget's limiter (nil without one).
func newSession(opts SessionOptions) (*discordgo.Session, *restLimiter, error) {
	token := strings.TrimSpace(opts.Token)
	if token == "" {
		return nil, nil, fmt.Errorf("discord: new session: empty token")
	}
	if !strings.HasPrefix(token, "Bot ") {
		token = "Bot " + token
	}
	s, err := discordgo.New(token)
	if err != nil {
		return nil, nil, fmt.Errorf("discord: new session: %w", err)
	}
	s.Identify.Intents = Intents
	s.StateEnabled = true
	s.AddHandler(learnVoiceMember)
	// Handlers run in the gateway's order, one at a time, so that a burst of messages reaches
	// the pipelines as it was sent. Handlers must therefore return quickly.
	s.SyncEvents = true
	timeout := opts.HTTPTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	var rt http.RoundTripper = http.DefaultTransport
	if opts.APIURL != "" && opts.APIURL != DefaultAPIURL {
		target, err := url.Parse(opts.APIURL)
		if err != nil || target.Host == "" || (target.Scheme != "http" && target.Scheme != "https") {
			return nil, nil, fmt.Errorf("discord: new session: API URL %q is not http(s)://host[:port]", opts.APIURL)
		}
		rt = &hostRewriter{scheme: target.Scheme, host: target.Host, next: http.DefaultTransport}
	}
	if opts.RESTMetrics != nil {
		rt = &restCounter{m: opts.RESTMetrics, next: rt}
	}
	var lim *restLimiter
	if opts.RESTPerSecond > 0 {
		lim = newRESTLimiter(opts.RESTPerSecond, rt)
		rt = lim
	}
	s.Client = &http.Client{Timeout: timeout, Transport: rt}
	return s, lim, nil
}

// learnVoiceMember keeps the member a VOICE_STATE_UPDATE carries in the session's state.
// discordgo records the voice state but not its member, and without the presences intent
// GUILD_CREATE lists only the bot and the members already in voice, so this is how the state
// learns the members who join voice later: their nickname (the voice pipeline's names), their
// roles and whether they are bots.
func learnVoiceMember(s *discordgo.Session, v *discordgo.VoiceStateUpdate) {
	if s.State == nil || v.VoiceState == nil || v.Member == nil || v.Member.User == nil || v.GuildID == "" {
		return
	}
	m := *v.Member
	m.GuildID = v.GuildID
	_ = s.State.MemberAdd(&m) // fails only for a guild the state does not hold: nothing to keep it in
}

// hostRewriter sends every request to another host, keeping method, path, query and body.
type hostRewriter struct {
	scheme, host string
	next         http.RoundTripper
}

func (h *hostRewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.URL.Scheme = h.scheme
	r.URL.Host = h.host
	r.Host = h.host
	return h.next.RoundTrip(r)
}
