// Package post is the one way banter creates Discord messages: every path (text replies,
// notices, the voice log channel, voice commands) goes through a Sender, which
//
//   - never lets a message ping anyone but, when asked, the replied-to user
//     (allowed_mentions parse: []), and defuses @everyone/@here/role mentions in the text;
//   - sends a reply Discord refuses for its reference (160009: the bot may not read the
//     channel's history, Unreferenceable) once more as a plain message opened by the
//     addressee's mention (reply_unreferenced), so that the member still gets the answer;
//   - splits text longer than Discord's 2,000 characters at paragraph, line, sentence or word
//     boundaries;
//   - gives each attempt its own deadline (Options.AttemptTimeout, default 10 s), and retries
//     500/502/503/504 answers, network errors (a connection cut with no answer) and attempts
//     that timed out (a request that hung, or never reached Discord) with capped exponential
//     back-off and full jitter, within a total budget (Options.Budget, default 30 s), sending
//     every attempt with the same message nonce and enforce_nonce, so that a create whose
//     answer was lost cannot post twice
//     (https://discord.com/developers/docs/resources/message#create-message); the caller's own
//     cancellation or deadline is final;
//   - logs a message it finally could not send (send_lost, with the turn id, and one more for
//     each turn coalesced into it) and counts every outcome.
//
// 429s are left to discordgo, which waits for retry_after and tries again.
package post

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"
)

// MaxLen is Discord's limit on a message's content, in characters.
const MaxLen = 2000

// Requester sends a REST request through discordgo's rate limiter. *discordgo.Session
// satisfies it.
type Requester interface {
	RequestWithBucketID(method, urlStr string, data any, bucketID string, options ...discordgo.RequestOption) ([]byte, error)
}

var _ Requester = (*discordgo.Session)(nil)

// Options configure a Sender.
type Options struct {
	// Attempts is how many times a create is tried in all (default 4).
	Attempts int
	// BaseDelay and MaxDelay bound the back-off before a retry: attempt n waits a random
	// duration in [0, min(MaxDelay, BaseDelay·2ⁿ)) (defaults 250 ms and 4 s).
	BaseDelay, MaxDelay time.Duration
	// AttemptTimeout bounds one attempt (default 10 s): an attempt without an answer by then
	// is given up and, while the caller's context lives, retried with the same nonce.
	AttemptTimeout time.Duration
	// Budget bounds a whole Create, every attempt and back-off included (default
	// 3 × AttemptTimeout); a create not done by then is lost (send_lost).
	Budget  time.Duration
	Logger  *slog.Logger
	Metrics *Metrics
}

// Sender creates messages. It is safe for concurrent use.
type Sender struct {
	rest Requester
	opts Options
}

// New returns a Sender that sends through rest.
func New(rest Requester, opts Options) *Sender {
	if opts.Attempts <= 0 {
		opts.Attempts = 4
	}
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = 250 * time.Millisecond
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = 4 * time.Second
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = DefaultAttemptTimeout
	}
	if opts.Budget <= 0 {
		opts.Budget = 3 * opts.AttemptTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Sender{rest: rest, opts: opts}
}

// Message is one message to create.
type Message struct {
	ChannelID string
	// Content must be at most MaxLen characters (Split longer text first). Mass mentions in it
	// are defused.
	Content string
	// ReplyTo, when set, makes the message a reply that fails if the target is gone (Discord
	// answers 400; the caller decides what to do then).
	ReplyTo, GuildID string
	// PingRepliedUser lets the reply notify the replied-to author; nothing else ever pings.
	PingRepliedUser bool
	// Addressee is the user the message answers (ReplyTo's author). A message sent without
	// ReplyTo — where the bot may not reply, lacking Read Message History — opens with their
	// mention instead (when it still fits MaxLen), which pings them only with PingRepliedUser,
	// as the reply would have. With ReplyTo set it is used only when Discord refuses the
	// reference (Unreferenceable) and the message goes out plain.
	Addressee string
	// TurnID names what the message answers, for the loss log.
	TurnID string
	// CoalescedTurnIDs are turns answered together with TurnID (coalesced into its reply): a
	// loss is logged for each of them too, so that every turn's fate is in the log under its
	// own id.
	CoalescedTurnIDs []string
	// Nonce, when set (at most 25 characters), is the message's nonce instead of a random one:
	// derived from what the message answers, a create sent again by another attempt or
	// another process within Discord's nonce window (a few minutes) returns the first message
	// instead of posting twice.
	Nonce string
}

// createBody is POST /channels/{id}/messages as the Sender sends it.
type createBody struct {
	Content          string                      `json:"content"`
	AllowedMentions  allowedMentions             `json:"allowed_mentions"`
	MessageReference *discordgo.MessageReference `json:"message_reference,omitempty"`
	Nonce            string                      `json:"nonce"`
	EnforceNonce     bool                        `json:"enforce_nonce"`
}

// allowedMentions is always parse: [] (never nil: an absent field would let Discord parse
// every mention in the text).
type allowedMentions struct {
	Parse       []string `json:"parse"`
	Users       []string `json:"users,omitempty"`
	RepliedUser bool     `json:"replied_user"`
}

// DefaultAttemptTimeout is how long one attempt of a create may take when
// Options.AttemptTimeout is not set.
const DefaultAttemptTimeout = 10 * time.Second

// errAttemptTimeout marks an attempt given up at its own deadline while the caller still waits:
// worth retrying, unlike the caller's own deadline.
var errAttemptTimeout = errors.New("post: attempt timed out")

// Create sends one message, retrying server errors, network failures and attempts that timed
// out with the same nonce. It returns the created message, or the last error (a
// *discordgo.RESTError for an HTTP answer) once the attempts or the budget are spent, the
// error is not worth retrying, or ctx is done. A reply Discord refuses for its reference
// (Unreferenceable) is sent once more without it (counted and logged reply_unreferenced).
func (s *Sender) Create(ctx context.Context, m Message) (*discordgo.Message, error) {
	sent, err := s.create(ctx, m)
	if m.ReplyTo == "" || !Unreferenceable(err) {
		return sent, err
	}
	s.opts.Metrics.count("reply_unreferenced")
	s.opts.Logger.Warn("reply_unreferenced", "channel_id", m.ChannelID, "turn_id", m.TurnID, "reply_to", m.ReplyTo,
		"error", err.Error())
	m.ReplyTo = ""
	return s.create(ctx, m)
}

// createRequest is the create request for m.
func createRequest(m Message) createBody {
	b := createBody{
		Content:         Defuse(m.Content),
		AllowedMentions: allowedMentions{Parse: []string{}},
		Nonce:           m.Nonce,
		EnforceNonce:    true,
	}
	if b.Nonce == "" {
		b.Nonce = newNonce()
	}
	switch {
	case m.ReplyTo != "":
		fail := true
		b.MessageReference = &discordgo.MessageReference{MessageID: m.ReplyTo, ChannelID: m.ChannelID, GuildID: m.GuildID, FailIfNotExists: &fail}
		b.AllowedMentions.RepliedUser = m.PingRepliedUser
	case m.Addressee != "":
		if opened := "<@" + m.Addressee + "> " + b.Content; utf8.RuneCountInString(opened) <= MaxLen {
			b.Content = opened
		}
		if m.PingRepliedUser {
			b.AllowedMentions.Users = []string{m.Addressee}
		}
	}
	return b
}

// create is Create without the reply's second chance.
func (s *Sender) create(ctx context.Context, m Message) (*discordgo.Message, error) {
	body := createRequest(m)
	budget, cancel := context.WithTimeout(ctx, s.opts.Budget)
	defer cancel()
	var err error
	tries := 0
	for attempt := 0; attempt < s.opts.Attempts; attempt++ {
		if attempt > 0 {
			s.opts.Metrics.count("retried")
			if werr := s.wait(budget, attempt); werr != nil {
				err = errors.Join(err, werr)
				break
			}
		}
		var raw []byte
		tries++
		raw, err = s.attempt(budget, m.ChannelID, body)
		if err == nil {
			s.opts.Metrics.count("sent") // Discord accepted it, whatever its answer says
			sent, derr := decodeAnswer(raw, m.ChannelID, body.Content)
			if derr != nil {
				s.opts.Logger.Error("send_answer_unreadable", "channel_id", m.ChannelID, "turn_id", m.TurnID,
					"nonce", body.Nonce, "error", derr.Error())
				return nil, fmt.Errorf("post: create in %s: sent, but %w", m.ChannelID, derr)
			}
			return sent, nil
		}
		if !Retryable(err) || budget.Err() != nil {
			break
		}
		s.opts.Logger.Warn("send_retry", "channel_id", m.ChannelID, "turn_id", m.TurnID, "attempt", attempt+1,
			"nonce", body.Nonce, "error", err.Error())
	}
	if Retryable(err) || budget.Err() != nil {
		s.opts.Metrics.count("lost")
		s.opts.Logger.Error("send_lost", "channel_id", m.ChannelID, "turn_id", m.TurnID, "attempts", tries,
			"nonce", body.Nonce, "error", err.Error())
		for _, id := range m.CoalescedTurnIDs {
			s.opts.Logger.Error("send_lost", "channel_id", m.ChannelID, "turn_id", id, "coalesced_into", m.TurnID,
				"attempts", tries, "nonce", body.Nonce, "error", err.Error())
		}
	} else if Refusal(err) != "" {
		s.opts.Metrics.count("forbidden")
	} else if Unreferenceable(err) {
		// counted by Create (reply_unreferenced), which sends it again without the reference
	} else {
		s.opts.Metrics.count("refused")
	}
	return nil, fmt.Errorf("post: create in %s: %w", m.ChannelID, err)
}

// attempt sends one create under its own deadline. An attempt given up at that deadline while
// ctx (the caller's, within the budget) lives returns an error wrapping errAttemptTimeout.
func (s *Sender) attempt(ctx context.Context, channelID string, body createBody) ([]byte, error) {
	actx, cancel := context.WithTimeout(ctx, s.opts.AttemptTimeout)
	defer cancel()
	endpoint := discordgo.EndpointChannelMessages(channelID)
	raw, err := s.rest.RequestWithBucketID(http.MethodPost, endpoint, body, endpoint, discordgo.WithContext(actx))
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		return nil, fmt.Errorf("%w after %s: %w", errAttemptTimeout, s.opts.AttemptTimeout, err)
	}
	return raw, err
}

// decodeAnswer reads Discord's answer to a create (a message object). The callers need the new
// message's id; when the full object does not decode (a field discordgo cannot read), the id and
// channel are enough, with the content as sent. An answer without an id is an error.
func decodeAnswer(raw []byte, channelID, content string) (*discordgo.Message, error) {
	var sent discordgo.Message
	err := json.Unmarshal(raw, &sent)
	if err == nil && sent.ID != "" {
		if sent.ChannelID == "" {
			sent.ChannelID = channelID
		}
		return &sent, nil
	}
	// encoding/json reads the fields it can past one of the wrong type, and nothing from
	// bytes that are not JSON.
	var bare struct {
		ID        string `json:"id"`
		ChannelID string `json:"channel_id"`
	}
	_ = json.Unmarshal(raw, &bare)
	if bare.ID == "" {
		if err == nil {
			err = errors.New("no message id")
		}
		return nil, fmt.Errorf("decode answer: %w", err)
	}
	if bare.ChannelID == "" {
		bare.ChannelID = channelID
	}
	return &discordgo.Message{ID: bare.ID, ChannelID: bare.ChannelID, Content: content}, nil
}

// Post sends text to a channel as plain messages (split, mentions defused, nothing pings),
// returning the ids sent. It stops at the first part that cannot be sent.
func (s *Sender) Post(ctx context.Context, channelID, text, turnID string) ([]string, error) {
	var ids []string
	for _, part := range Split(text, MaxLen) {
		sent, err := s.Create(ctx, Message{ChannelID: channelID, Content: part, TurnID: turnID})
		if err != nil {
			return ids, err
		}
		ids = append(ids, sent.ID)
	}
	return ids, nil
}

// wait sleeps before retry number attempt: full jitter over a capped exponential.
func (s *Sender) wait(ctx context.Context, attempt int) error {
	ceiling := s.opts.BaseDelay << min(attempt-1, 16)
	if ceiling > s.opts.MaxDelay || ceiling <= 0 {
		ceiling = s.opts.MaxDelay
	}
	t := time.NewTimer(rand.N(ceiling) + time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Retryable reports whether a failed request may succeed if sent again: a 500, 502, 503 or
// 504 answer, a network failure, or an attempt given up at its own deadline (not the caller's
// cancelled or expired context).
func Retryable(err error) bool {
	if errors.Is(err, errAttemptTimeout) {
		return true
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) {
		if re.Response == nil {
			return false
		}
		switch re.Response.StatusCode {
		case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne)
}

// Refusal says why Discord refused a request with 403 Forbidden: "missing_permissions" (JSON
// code 50013: the bot lacks a permission in the channel, such as Send Messages),
// "missing_access" (50001: it may not see the channel), "forbidden" (another 403); "" for any
// other error. A refusal is final: sending again cannot succeed until a moderator changes the
// channel's permissions.
//
// A reply refused for its reference (Unreferenceable) is no refusal: the same text may be sent
// without the reference.
func Refusal(err error) string {
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response == nil || re.Response.StatusCode != http.StatusForbidden || Unreferenceable(err) {
		return ""
	}
	if re.Message != nil {
		switch re.Message.Code {
		case discordgo.ErrCodeMissingPermissions:
			return "missing_permissions"
		case discordgo.ErrCodeMissingAccess:
			return "missing_access"
		}
	}
	return "forbidden"
}

// Unreferenceable reports whether Discord refused a message for its message_reference because
// the bot may not read the channel's history (no Read Message History): JSON code 160009
// "Cannot reference a message without permission to read message history", or 160002 "Cannot
// reply without permission to read message history", the older table's reply-only code (which
// of the two Discord sends for a reply today is not published). The code decides, whatever the
// HTTP status (160002 came with 403; no source gives 160009's).
func Unreferenceable(err error) bool {
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Message == nil {
		return false
	}
	return re.Message.Code == ErrCodeCannotReference || re.Message.Code == discordgo.ErrCodeCannotReplyWithoutPermissionToReadMessageHistory
}

// ErrCodeCannotReference is Discord's JSON error code for a message_reference its sender may
// not read (discord/discord-api-docs#8424); discordgo does not name it.
const ErrCodeCannotReference = 160009

// newNonce is a fresh message nonce: Discord accepts a string of up to 25 characters.
func newNonce() string { return strconv.FormatUint(rand.Uint64(), 36) }

// Metrics count the Sender's outcomes. A nil *Metrics is a no-op.
type Metrics struct {
	sends *prometheus.CounterVec
}

// NewMetrics registers with reg (nil: not registered):
//
//	banter_discord_sends_total{result}   sent, retried (one per retry), lost (server or network
//	                                     failure after the last attempt), forbidden (a 403: the
//	                                     bot lacks a permission in the channel; never retried),
//	                                     refused (another 4xx), reply_unreferenced (a reply
//	                                     refused for its reference, 160009, sent again plain)
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{sends: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_discord_sends_total",
		Help: "Message creates by outcome (retried counts each retry)."}, []string{"result"})}
	if reg != nil {
		reg.MustRegister(m.sends)
	}
	return m
}

func (m *Metrics) count(result string) {
	if m != nil {
		m.sends.WithLabelValues(result).Inc()
	}
}
