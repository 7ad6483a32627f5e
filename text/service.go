package text

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord/post"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/memory"
	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// Discord is the REST surface the pipeline uses. *discordgo.Session satisfies it.
type Discord interface {
	ChannelMessageSendComplex(channelID string, data *discordgo.MessageSend, options ...discordgo.RequestOption) (*discordgo.Message, error)
	ChannelMessage(channelID, messageID string, options ...discordgo.RequestOption) (*discordgo.Message, error)
	ChannelMessages(channelID string, limit int, beforeID, afterID, aroundID string, options ...discordgo.RequestOption) ([]*discordgo.Message, error)
	ChannelTyping(channelID string, options ...discordgo.RequestOption) error
	Channel(channelID string, options ...discordgo.RequestOption) (*discordgo.Channel, error)
	GuildMember(guildID, userID string, options ...discordgo.RequestOption) (*discordgo.Member, error)
	post.Requester
}

var _ Discord = (*discordgo.Session)(nil)

// Generator is the reply model. *llm.Client satisfies it.
type Generator interface {
	Generate(ctx context.Context, req llm.GenerateRequest) (*llm.Result, error)
}

var _ Generator = (*llm.Client)(nil)

// Options are the collaborators of a Service.
type Options struct {
	// Config returns the configuration in force; it is read for every turn, so reloads apply
	// at once.
	Config func() *config.Config
	// Discord is the REST client; Store persists messages, personas and the prompt ledger.
	Discord Discord
	Store   store.Store
	// Model writes replies (llm); FollowupModel runs the replyFollowupLlm pass after lookups,
	// WebSearchModel the web_search lookup (lookups.webSearch) and VisionModel the image_lookup
	// (lookups.image), each on its own provider when the config names one (nil: Model).
	Model          Generator
	FollowupModel  Generator
	WebSearchModel Generator
	VisionModel    Generator
	// Memory extracts facts from stored messages (nil: no extraction; memory.enabled decides
	// per guild).
	Memory *memory.Extractor
	// Embedder embeds memory_lookup's queries so that it finds by meaning as well as by words
	// (nil, or embeddings.enabled off: by words only).
	Embedder *memory.Embedder
	// Engine is text Stage A. Its policy is kept in step with Config by the Service.
	Engine *decision.TextEngine
	// Decisions logs and counts Stage B decisions (Stage A records its own through Engine).
	Decisions *decision.Recorder
	Logger    *slog.Logger
	Metrics   *Metrics
	// Sender creates every message the pipeline posts (default: one over Discord with no
	// metrics). Share one Sender between the pipelines so that its metrics count them all.
	Sender *post.Sender
	// ImageClient downloads the images shown to the model (nil: a default client; redirects
	// are followed only to allowed hosts).
	ImageClient *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Budget, when set, quiets a guild at its daily spending cap (budget.go).
	Budget Quieter
}

// Service is the text pipeline. Feed it gateway events with Attach (or the Handle methods);
// Shutdown stops intake and waits for in-flight replies.
type Service struct {
	opts   Options
	sender *post.Sender
	logger *slog.Logger
	now    func() time.Time
	// started is when New ran: a message from before it may have been handled by an earlier
	// process (a memory command read back by the startup catch-up).
	started time.Time
	self    atomic.Pointer[discordgo.User]
	// state is the attached session's state cache, read for the bot's channel permissions.
	state atomic.Pointer[discordgo.State]
	// policyFor is the configuration the engine's policy was last built from.
	policyFor atomic.Pointer[config.Config]
	// filt is the content filter and the configuration it was built from.
	filt atomic.Pointer[configFilter]
	// fetch is the image fetcher and the configuration it was built from.
	fetch atomic.Pointer[configFetcher]
	// names are the names of users seen in messages, for their mentions (mentionbook.go).
	names *nameBook

	ctx    context.Context // lifetime of queued work; cancelled by Shutdown's deadline
	cancel context.CancelFunc
	wg     sync.WaitGroup // channel workers

	mu       sync.Mutex // guards following
	closed   bool
	channels map[string]*channelState
	// pending are the catch-ups a READY left waiting for their guild's GUILD_CREATE (the
	// bot's permissions there are unknown until then), by guild and channel.
	pending map[string]map[string]pendingCatchUp
}

// New returns a Service. Start it with Start before feeding it events.
func New(opts Options) (*Service, error) {
	if opts.Config == nil || opts.Discord == nil || opts.Store == nil || opts.Model == nil || opts.Engine == nil {
		return nil, errors.New("text: new service: Config, Discord, Store, Model and Engine are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sender == nil {
		opts.Sender = post.New(opts.Discord, post.Options{Logger: opts.Logger})
	}
	s := &Service{opts: opts, sender: opts.Sender, logger: opts.Logger, now: opts.Now, started: opts.Now(), channels: map[string]*channelState{}, names: newNameBook()}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// SetSelf tells the pipeline who the bot is (from READY).
func (s *Service) SetSelf(u *discordgo.User) {
	if u != nil {
		s.self.Store(u)
	}
}

func (s *Service) selfID() string {
	if u := s.self.Load(); u != nil {
		return u.ID
	}
	return ""
}

// Attach registers the pipeline's handlers on a discordgo session and returns a function that
// removes them (stop intake).
func (s *Service) Attach(sess *discordgo.Session) (detach func()) {
	if sess.State != nil {
		s.state.Store(sess.State)
		if sess.State.User != nil {
			s.SetSelf(sess.State.User)
		}
	}
	removers := []func(){
		sess.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
			s.SetSelf(r.User)
			s.CatchUp("ready") // a new session: nothing said since the last one was delivered
		}),
		sess.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) { s.CatchUp("resumed") }),
		sess.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildCreate) {
			s.resumeMemory(g.Guild)
			s.CatchUpGuild(g.Guild)
		}),
		sess.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildDelete) {
			if g.Guild != nil && !g.Unavailable { // the bot left or was removed: no GUILD_CREATE will come
				s.dropPendingCatchUps(g.ID)
			}
		}),
		sess.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) { s.HandleMessageCreate(m.Message) }),
		sess.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageUpdate) { s.HandleMessageUpdate(m.Message) }),
		sess.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageDelete) { s.HandleMessageDelete(m.Message) }),
	}
	return func() {
		for _, r := range removers {
			r()
		}
	}
}

// Shutdown stops accepting turns, lets queued and in-flight replies finish until ctx is done,
// then cancels what is left and waits for the workers to exit.
func (s *Service) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	for _, ch := range s.channels {
		ch.wake()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.cancel()
		<-done
		return fmt.Errorf("text: shutdown: in-flight replies cancelled: %w", ctx.Err())
	}
}

// cfg returns the configuration in force and keeps Stage A's policy in step with it.
func (s *Service) cfg() *config.Config {
	c := s.opts.Config()
	if s.policyFor.Swap(c) != c {
		s.opts.Engine.SetPolicy(Policy(c))
	}
	return c
}

// configFilter is a content filter with the configuration it applies.
type configFilter struct {
	cfg *config.Config
	f   *safety.Filter
}

// filter returns the content filter of cfg (blocked users, ban words), built once per
// configuration.
func (s *Service) filter(cfg *config.Config) *safety.Filter {
	if cf := s.filt.Load(); cf != nil && cf.cfg == cfg {
		return cf.f
	}
	f := safety.ForConfig(cfg)
	s.filt.Store(&configFilter{cfg: cfg, f: f})
	return f
}

// excluded reports why a stored message must stay out of the model's context (safety.Allowed
// when it may be shown): its author is blocked or it holds a ban word. The bot's own messages
// are never excluded. It is applied when a message is saved from any source (gateway, REST
// lookup, backfill, catch-up) and again when the context is read, so that a configuration
// reload also hides what was stored before it.
func (s *Service) excluded(cfg *config.Config, m store.Message) safety.Reason {
	return s.filter(cfg).Exclude(m.AuthorID, m.Content, m.IsSelf)
}

// shownOnly returns the messages of ms that may enter the model's context.
func (s *Service) shownOnly(cfg *config.Config, ms []store.Message) []store.Message {
	out := ms[:0:0]
	for _, m := range ms {
		if s.excluded(cfg, m) == safety.Allowed {
			out = append(out, m)
		}
	}
	return out
}
