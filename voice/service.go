package voice

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/discord/bots"
	"github.com/banterbot/banter/discord/dave"
	"github.com/banterbot/banter/discord/dave/voiceadapter"
	"github.com/banterbot/banter/discord/post"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
)

// Model is what the STT pipeline needs from the OpenAI client; *llm.Client
// implements it.
type Model interface {
	Transcribe(ctx context.Context, model string, wav []byte, opts llm.TranscribeOptions) (llm.Transcript, error)
	Generator
	Synthesizer
}

var _ Model = (*llm.Client)(nil)

// Options configure a Service.
type Options struct {
	// Config returns the configuration in force (read per turn, so reloads
	// apply to the next turn).
	Config func() *config.Config
	// Discord is the main gateway session: voice signalling (op 4 and the
	// voice events), member names from its state, the log channel, slash
	// command replies. It must be open before Join.
	Discord *discordgo.Session
	// Sender creates every message the service posts (log channel, command answers); nil
	// builds one over Discord. Share the process's Sender so that its metrics count them all.
	Sender *post.Sender
	// Gateway sends voice state updates and delivers the voice events when the process runs
	// several shards (discord.Shards routes each guild to its shard); nil means Discord.
	Gateway dvoice.MainGateway
	// StateFor returns the gateway state that holds a guild (its shard's); nil means
	// Discord.State.
	StateFor func(guildID string) *discordgo.State
	// LLM does speech to text, generation and speech.
	LLM Model
	// Engine is voice Stage A (decision.NewVoiceEngine(voice.Policy(cfg), ...)).
	Engine *decision.VoiceEngine
	// Budget, when set, stops the bot speaking in a guild at its daily spending cap: turns
	// are denied (budget_cap) before any model is asked; commands are still heard.
	Budget Quieter
	// NewResponder makes the Responder of each voice session, when it
	// starts, with the session's context (which ends with the session); a
	// Responder that is an io.Closer is closed when the session ends.
	// voice/realtime's Sessions makes one realtime socket per session this
	// way. Nil: every session shares the STT pipeline's STTResponder, built
	// from LLM and the configuration.
	NewResponder ResponderFactory
	// Personas looks up the members' /persona descriptions for the prompt
	// (the store); nil lists the members by name only.
	Personas PersonaLookup
	// KeptSessions, when set, keeps the sessions joined by /join and !join across restarts
	// (the store): recorded when they start, dropped when they end for a reason that means
	// "stay out" (rejoin.go), taken up again by Rejoin in the next process.
	KeptSessions store.VoiceSessions
	// OpenTurns, when set, records the utterance the bot is answering in each guild while it
	// answers (the store), so that a crash or a stop does not lose it: the guild's next session
	// takes the record and answers it again, keeps it in its conversation or logs it as too old
	// (openturns.go).
	OpenTurns store.OpenVoiceTurns
	// ChatImages, when set, shows a voice turn's model the last image posted in the voice
	// channel's text chat (images.voiceChatMinutes; nil: never).
	ChatImages ChatImageLookup
	// Memory, when set, is long-term memory (docs/memory.md): members' transcripts are
	// captured for extraction, and every reply's prompt carries the facts of its participants
	// (memory.enabled decides, per guild). *memory.Extractor implements it.
	Memory Memory
	// ListenFormat is the utterance audio format (default 16 kHz mono for
	// speech to text; 24 kHz for the realtime API).
	ListenFormat pcm.Format
	// SpeakFormat is the PCM a Responder writes to Playback (default 24 kHz
	// mono, llm.SpeechSampleRate).
	SpeakFormat pcm.Format
	// SpeakEncoder is the reply encoder's settings; zero fields take
	// ReplyEncoder's defaults (audio application, 64 kb/s, complexity 5,
	// encoding SpeakFormat as it is). Rate and Channels, when set, make
	// Playback resample to them before encoding (48000 and 2: the path
	// before issue 24, kept comparable by TestReplyAudioSameAtTTSRate).
	SpeakEncoder opus.EncoderConfig
	// VoiceTLS is the voice WebSocket's TLS config (nil: system roots; the
	// simulator's CA for local runs).
	VoiceTLS *tls.Config
	// SendRealtimePriority, if > 0, sends each reply frame from a SCHED_FIFO
	// thread at this priority (discord/voice Config.SendRealtimePriority;
	// needs CAP_SYS_NICE), so other load on the machine does not make
	// frames late.
	SendRealtimePriority int
	// SendSpin is discord/voice Config.SendSpin: the last stretch before
	// each frame slot spent yielding instead of sleeping (0: the transport's
	// default, 1 ms; negative: off). With many sessions the spinning of all
	// senders costs more than it saves; turn it off there.
	SendSpin time.Duration
	// SendClock, if set, sends every session's frames on this one clock
	// (discord/voice SendClock: a timer wheel, frames queued ahead of their
	// slot, batched sends); SendSpin and SendRealtimePriority then do not
	// apply. The caller closes it after Shutdown.
	SendClock *dvoice.SendClock
	// DisableDAVE advertises no DAVE support (max_dave_protocol_version 0).
	// DAVE is on by default; Discord requires it.
	DisableDAVE bool
	Logger      *slog.Logger
	// Metrics, TransportMetrics, AudioMetrics and DAVEMetrics may be nil.
	Metrics          *Metrics
	TransportMetrics *dvoice.Metrics
	AudioMetrics     *audio.Metrics
	DAVEMetrics      *dave.Metrics
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// ResponderFactory makes the Responder of one voice session (Options.NewResponder).
type ResponderFactory func(ctx context.Context, s SessionInfo) (Responder, error)

// SessionInfo identifies a voice session to its ResponderFactory: one per
// guild at a time. A join of another channel by command is a new session; a move of the bot
// by a moderator is not (the session and its Responder go on in the new channel).
type SessionInfo struct {
	// GuildID and ChannelID are where the session starts (a move changes the channel).
	GuildID, ChannelID string
	// Logger is the session's logger: its lines carry guild_id, and channel_id the channel
	// the session is in when the line is logged (after a move, the new one). A Responder
	// that keeps it for the session's life follows the move.
	Logger *slog.Logger
}

// Service runs the bot's voice sessions: one per guild, joined and left by
// command, by autoJoin, or when alone or after maxSessionMinutes.
type Service struct {
	opts Options
	log  *slog.Logger
	gw   dvoice.MainGateway // Options.Gateway, else Discord
	mgr  *dvoice.Manager
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
	hear hearClock // every session's receive side, on one 20 ms tick
	// bots says which speakers are bots (voice.hearBots): the gateway state, else REST.
	bots *bots.Directory
	// spansOffUntil (Unix ns): a transcription session was refused; upload until then.
	spansOffUntil atomic.Int64

	mu       sync.Mutex // guards following
	sessions map[string]*session
	closed   bool
	// guildOps holds each guild's operation lock (lockGuild): a buffered channel of one,
	// made at the guild's first join or leave and kept (one a guild the bot has been in).
	guildOps map[string]chan struct{}
}

// New builds the Service and its voice connection manager on opts.Discord.
// opts.Discord.State.User must be set (the session is open).
func New(opts Options) (*Service, error) {
	if opts.Config == nil || opts.Discord == nil || opts.Engine == nil {
		return nil, errors.New("voice: New: Config, Discord and Engine are required")
	}
	if opts.NewResponder == nil && opts.LLM == nil {
		return nil, errors.New("voice: New: LLM or NewResponder is required")
	}
	if opts.Discord.State == nil || opts.Discord.State.User == nil {
		return nil, errors.New("voice: New: the Discord session is not open (no user)")
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
	if opts.ListenFormat.Rate == 0 {
		opts.ListenFormat = pcm.Speech16k()
	}
	if opts.SpeakFormat.Rate == 0 {
		opts.SpeakFormat = pcm.Mono24k()
	}
	svc := &Service{opts: opts, log: opts.Logger, sessions: map[string]*session{}, guildOps: map[string]chan struct{}{}}
	if opts.NewResponder == nil {
		v := opts.Config().Voice
		if v.Mode == "realtime" {
			opts.Logger.Warn("voice_mode_fallback", "mode", v.Mode,
				"detail", "no realtime Responder wired: answering through the STT pipeline")
		}
		stt := &STTResponder{Gen: opts.LLM, TTS: opts.LLM, Model: v.GenerationLLM.Model,
			TTSModel: v.STTPipeline.TTSModel, TTSVoice: v.STTPipeline.TTSVoice,
			Logger: opts.Logger, Metrics: opts.Metrics, Now: opts.Now}
		svc.opts.NewResponder = func(context.Context, SessionInfo) (Responder, error) { return stt, nil }
	}
	svc.bots = bots.New(svc.state, bots.SessionFetch(opts.Discord))
	svc.ctx, svc.stop = context.WithCancel(context.Background())
	mc := dvoice.ManagerConfig{
		UserID:    opts.Discord.State.User.ID,
		OnConnect: svc.onConnect,
		OnMove:    svc.onMove,
		Conn: dvoice.Config{TLSConfig: opts.VoiceTLS, Logger: opts.Logger, Metrics: opts.TransportMetrics,
			SendRealtimePriority: opts.SendRealtimePriority, SendSpin: opts.SendSpin, Clock: opts.SendClock},
	}
	if !opts.DisableDAVE {
		uid, _ := strconv.ParseUint(opts.Discord.State.User.ID, 10, 64)
		mc.NewE2EE = func(_, channelID string) dvoice.E2EE {
			cid, _ := strconv.ParseUint(channelID, 10, 64)
			return voiceadapter.New(dave.NewSession(dave.Config{UserID: uid, ChannelID: cid,
				Logger: opts.Logger, Now: opts.Now, Metrics: opts.DAVEMetrics}))
		}
	}
	gw := opts.Gateway
	if gw == nil {
		gw = opts.Discord
	}
	svc.gw = gw
	svc.mgr = dvoice.NewManager(gw, mc)
	return svc, nil
}

func (svc *Service) cfg() *config.Config { return svc.opts.Config() }
func (svc *Service) now() time.Time      { return svc.opts.Now() }
func (svc *Service) userID() string      { return svc.opts.Discord.State.User.ID }

// gateway is the main gateway: every shard's events, voice signalling.
func (svc *Service) gateway() dvoice.MainGateway { return svc.gw }

// state is the gateway state that holds the guild.
func (svc *Service) state(guildID string) *discordgo.State {
	if svc.opts.StateFor != nil {
		if st := svc.opts.StateFor(guildID); st != nil {
			return st
		}
	}
	return svc.opts.Discord.State
}

// botNickname returns the bot's nickname in a guild from the gateway state ("" none or unknown):
// Discord sends the bot its own GUILD_MEMBER_UPDATE when it is renamed.
func (svc *Service) botNickname(guildID string) string {
	st := svc.state(guildID)
	m, err := st.Member(guildID, svc.userID())
	if err != nil || m == nil {
		return ""
	}
	st.RLock() // discordgo updates members in place under the state's lock
	defer st.RUnlock()
	return m.Nick
}

// name returns a member's display name from the gateway state, or the id.
func (svc *Service) name(guildID, userID string) string {
	st := svc.state(guildID)
	if m, err := st.Member(guildID, userID); err == nil && m != nil {
		// discordgo updates members in place under the state's lock.
		st.RLock()
		defer st.RUnlock()
		if m.Nick != "" {
			return m.Nick
		}
		if m.User != nil {
			if m.User.GlobalName != "" {
				return m.User.GlobalName
			}
			return m.User.Username
		}
	}
	return userID
}

// onConnect hands a fresh connection (after a move or a lost session) to
// the guild's session. It runs on the manager's guild goroutine.
func (svc *Service) onConnect(guildID string, c *dvoice.Conn) {
	svc.mu.Lock()
	s := svc.sessions[guildID]
	svc.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	same := s.conn == c
	s.mu.Unlock()
	if same {
		return
	}
	select {
	case s.conns <- c:
	default:
	}
}

// Join joins (or moves to) channelID in guildID and starts the guild's
// session. Joining the channel the session is already in does nothing.
func (svc *Service) Join(ctx context.Context, guildID, channelID string) error {
	return svc.join(ctx, guildID, channelID, joinHow{})
}

// joinHow says how a session is joined: by a member's command (kept across restarts), by a
// rejoin of a kept session (since: when it began; requestedBy: who asked, from the record), or
// else (autoJoin) neither. ifIdle joins
// only a guild without a session (a rejoin, autoJoin at start): else errBusy.
type joinHow struct {
	keep        bool
	requestedBy string
	since       time.Time
	ifIdle      bool
}

// errBusy: a join that asked for an idle guild found a session there.
var errBusy = errors.New("voice: join: the guild has a session already")

// lockGuild takes the guild's operation lock: one join, leave or end of a session at a time
// in a guild, so that the end of a session (its leaving the channel, its record) never
// undoes a join that came after it. The returned function releases it.
func (svc *Service) lockGuild(ctx context.Context, guildID string) (unlock func(), err error) {
	svc.mu.Lock()
	op := svc.guildOps[guildID]
	if op == nil {
		op = make(chan struct{}, 1)
		svc.guildOps[guildID] = op
	}
	svc.mu.Unlock()
	select {
	case op <- struct{}{}:
		return func() { <-op }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("voice: guild %s busy: %w", guildID, ctx.Err())
	}
}

// join is Join, the session started as how says. A session of the guild that is ending on
// its own (alone, max_session, disconnected, moved_afk…), or about to without having taken
// it in yet (session.endingSoon: its connection closed 4014 with no move known yet, the bot's
// voice state already out of its channel), is ended and waited for, then the channel joined
// afresh, even the same channel (voice_join_waiting): a join a moment after such an end is
// never lost to it.
func (svc *Service) join(ctx context.Context, guildID, channelID string, how joinHow) error {
	unlock, err := svc.lockGuild(ctx, guildID)
	if err != nil {
		return fmt.Errorf("voice: join %s/%s: %w", guildID, channelID, err)
	}
	defer unlock()
	svc.mu.Lock()
	if svc.closed {
		svc.mu.Unlock()
		return errors.New("voice: join: service shut down")
	}
	old := svc.sessions[guildID]
	svc.mu.Unlock()
	if old != nil {
		switch {
		case old.endingSoon():
			old.logger().Info("voice_join_waiting", "reason", "session_ending", "join_channel_id", channelID)
		case how.ifIdle:
			return errBusy
		case old.channel() == channelID:
			return nil
		}
		if err := svc.leaveLocked(ctx, guildID, endLeft); err != nil {
			return err
		}
	}
	conn, err := svc.mgr.Join(ctx, guildID, channelID)
	if err != nil {
		return fmt.Errorf("voice: join %s/%s: %w", guildID, channelID, err)
	}
	s, err := newSession(svc, guildID, channelID, conn)
	if err == nil {
		s.kept, s.requestedBy = how.keep || !how.since.IsZero(), how.requestedBy
		if !how.since.IsZero() {
			s.rejoined = true
			if how.since.Before(s.since) {
				s.since = how.since
			}
		}
		s.responder, err = svc.opts.NewResponder(s.ctx, SessionInfo{GuildID: guildID, ChannelID: channelID, Logger: s.logger()})
		if err != nil {
			s.cancel()
			err = fmt.Errorf("voice: join: responder: %w", err)
		}
	}
	if err != nil {
		return errors.Join(err, svc.mgr.Leave(ctx, guildID))
	}
	svc.mu.Lock()
	svc.sessions[guildID] = s
	svc.mu.Unlock()
	if s.rejoined {
		s.logger().Info("voice_session_start", "rejoined", true)
	} else {
		s.logger().Info("voice_session_start")
	}
	if how.keep {
		svc.keepRecord(ctx, s, how.requestedBy)
	}
	svc.wg.Go(func() { svc.runSession(s) })
	return nil
}

// runSession runs the session until it ends, leaves the channel when it ended itself (and no
// join or leave took the guild over meanwhile), and logs and counts its end.
func (svc *Service) runSession(s *session) {
	s.run()
	reason := s.reason()
	svc.endSession(s)
	svc.opts.Metrics.sessionEnd(reason)
	// Turns still waiting for Stage A or for the bot's turn end with the session.
	pending := len(s.queue) + len(s.deferred) + len(s.held)
	if s.deciding {
		pending++
	}
	s.logger().Info("voice_session_end", "reason", reason, "pending_turns", pending)
}

// endSession takes a session that ended out of the guild's place, under the guild's lock:
// when it is still the guild's session it ended itself, and leaves the channel. A session a
// leave or a join took out already is theirs to leave: the channel may be a new session's.
func (svc *Service) endSession(s *session) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(svc.ctx), 30*time.Second)
	defer cancel()
	unlock, err := svc.lockGuild(ctx, s.guildID)
	if err != nil { // a join or leave stuck past its own bounds: do not touch the guild
		s.logger().Warn("voice_leave_failed", "error", err)
		return
	}
	defer unlock()
	svc.mu.Lock()
	mine := svc.sessions[s.guildID] == s
	if mine {
		delete(svc.sessions, s.guildID)
	}
	svc.mu.Unlock()
	if !mine || s.endReason == "" {
		return
	}
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	defer lcancel()
	if err := svc.mgr.Leave(lctx, s.guildID); err != nil {
		s.logger().Warn("voice_leave_failed", "error", err)
	}
}

// shutdownGuild ends the guild's session, if it has one once the guild's lock is free, for
// reason shutdown. Joins after it fail: the service is closed.
func (svc *Service) shutdownGuild(ctx context.Context, guildID string) error {
	unlock, err := svc.lockGuild(ctx, guildID)
	if err != nil {
		return fmt.Errorf("voice: shutdown %s: %w", guildID, err)
	}
	defer unlock()
	svc.mu.Lock()
	s := svc.sessions[guildID]
	svc.mu.Unlock()
	if s == nil {
		return nil
	}
	return svc.leaveLocked(ctx, guildID, endShutdown)
}

// Leave ends the guild's session (reason left) and leaves its voice channel.
func (svc *Service) Leave(ctx context.Context, guildID string) error {
	return svc.leave(ctx, guildID, endLeft)
}

// leave is Leave, the session ending for reason (left, shutdown).
func (svc *Service) leave(ctx context.Context, guildID, reason string) error {
	unlock, err := svc.lockGuild(ctx, guildID)
	if err != nil {
		return fmt.Errorf("voice: leave %s: %w", guildID, err)
	}
	defer unlock()
	return svc.leaveLocked(ctx, guildID, reason)
}

// leaveLocked is leave, under the guild's lock.
func (svc *Service) leaveLocked(ctx context.Context, guildID, reason string) error {
	svc.mu.Lock()
	s := svc.sessions[guildID]
	delete(svc.sessions, guildID)
	svc.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		s.leftFor = reason
		s.mu.Unlock()
		s.cancel()
		select {
		case <-s.done:
		case <-ctx.Done():
			return fmt.Errorf("voice: leave %s: %w", guildID, ctx.Err())
		}
	}
	if err := svc.mgr.Leave(ctx, guildID); err != nil {
		return fmt.Errorf("voice: leave %s: %w", guildID, err)
	}
	return nil
}

// Channel returns the voice channel the guild's session is in ("" if none).
func (svc *Service) Channel(guildID string) string {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if s := svc.sessions[guildID]; s != nil {
		return s.channel()
	}
	return ""
}

// Shutdown leaves every channel and stops the Service, waiting for all of
// its goroutines (bounded by ctx).
func (svc *Service) Shutdown(ctx context.Context) error {
	svc.mu.Lock()
	svc.closed = true
	// Every guild a join, leave or end has locked, not only those with a session now: a join
	// in flight (waiting for Discord) holds its guild's lock and starts its session after
	// this; taking each guild's lock in turn waits for it, and then leaves its session.
	guilds := make([]string, 0, len(svc.guildOps))
	for g := range svc.guildOps {
		guilds = append(guilds, g)
	}
	svc.mu.Unlock()
	svc.log.Info("voice_shutdown", "guilds", len(guilds))
	var errs []error
	for _, g := range guilds { // ended "shutdown": their records are kept for the next process
		if err := svc.shutdownGuild(ctx, g); err != nil {
			errs = append(errs, err)
		}
	}
	svc.stop()
	done := make(chan struct{})
	go func() { svc.wg.Wait(); close(done) }()
	select {
	case <-done:
		// Every session has ended, so the hearing clock has no speaker left: it stops on
		// its next tick.
		if err := svc.hear.wait(ctx); err != nil {
			errs = append(errs, fmt.Errorf("voice: shutdown: hearing clock: %w", err))
		}
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("voice: shutdown: %w", ctx.Err()))
	}
	errs = append(errs, svc.mgr.Close())
	return errors.Join(errs...)
}
