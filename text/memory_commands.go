package text

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/discord/post"
	"github.com/banterbot/banter/store"
)

// /memory: what people may ask of banter's memory of them, in the server they run it in
// (docs/memory.md). The prefix form ("!banter memory forget-me") does the same, except show,
// whose answer would be public: it points to the slash command, which answers privately.

// memoryCommandName is the slash command; its subcommands are the memory actions.
const memoryCommandName = "memory"

// Memory actions: a member's own (show … resume) and a server admin's (list, delete).
const (
	memShow     = "show"
	memForget   = "forget"
	memForgetMe = "forget-me"
	memPause    = "pause"
	memResume   = "resume"
	memList     = "list"
	memDelete   = "delete"
)

// maxShownFacts bounds /memory show's list.
const maxShownFacts = 25

// memoryRequest is one /memory command as given (slash or prefix form).
type memoryRequest struct {
	action string
	n      int    // forget: the fact's number in /memory show (0: none given, -1: not one)
	id     int64  // delete: the fact's id in /memory list (0: none given, -1: not one)
	member string // list: the member whose facts to list ("": every subject)
	admin  bool   // the member may manage the server (Manage Server or Administrator)
	public bool   // the prefix form: the answer is public
	// at is when the member gave the command, by Discord's clock (its message's or
	// interaction's id): forget-me forgets what they said before it, also when a catch-up runs
	// a command given while banter was down (zero: now).
	at time.Time
}

// memoryCommand is the /memory registration.
func memoryCommand() *discordgo.ApplicationCommand {
	sub := func(name, desc string, opts ...*discordgo.ApplicationCommandOption) *discordgo.ApplicationCommandOption {
		return &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommand, Name: name, Description: desc, Options: opts}
	}
	one := 1.0
	return &discordgo.ApplicationCommand{
		Name:        memoryCommandName,
		Description: "What the bot remembers about you in this server",
		Options: []*discordgo.ApplicationCommandOption{
			sub(memShow, "Show what the bot remembers about you here"),
			sub(memForget, "Forget one fact (its number in /memory show)", &discordgo.ApplicationCommandOption{
				Type: discordgo.ApplicationCommandOptionInteger, Name: "number", Description: "The fact's number in /memory show",
				Required: true, MinValue: &one, MaxValue: maxShownFacts}),
			sub(memForgetMe, "Forget every fact about you and every message of yours in this server"),
			sub(memPause, "Stop remembering what you say here"),
			sub(memResume, "Remember what you say here again"),
			sub(memList, "Server admins: list the facts remembered in this server, with their ids", &discordgo.ApplicationCommandOption{
				Type: discordgo.ApplicationCommandOptionUser, Name: "member", Description: "Only the facts about this member"}),
			sub(memDelete, "Server admins: delete one fact by its id in /memory list", &discordgo.ApplicationCommandOption{
				Type: discordgo.ApplicationCommandOptionInteger, Name: "id", Description: "The fact's id in /memory list",
				Required: true, MinValue: &one, MaxValue: maxFactID}),
		},
	}
}

// maxFactID is the largest fact id an option can name (a JSON number stays exact below 2^53).
const maxFactID = 1<<53 - 1

// memoryInteraction reads a /memory interaction. Its options are untrusted: a value of another
// type than registered, or out of range, is ignored (discordgo's IntValue would panic on it).
func memoryInteraction(data discordgo.ApplicationCommandInteractionData) memoryRequest {
	if len(data.Options) != 1 || data.Options[0] == nil || data.Options[0].Type != discordgo.ApplicationCommandOptionSubCommand {
		return memoryRequest{}
	}
	sub := data.Options[0]
	r := memoryRequest{action: sub.Name}
	for _, o := range sub.Options {
		if o == nil {
			continue
		}
		switch {
		case o.Name == "number" && o.Type == discordgo.ApplicationCommandOptionInteger:
			if f, ok := o.Value.(float64); ok && f >= 1 && f <= maxShownFacts && f == float64(int(f)) {
				r.n = int(f)
			}
		case o.Name == "id" && o.Type == discordgo.ApplicationCommandOptionInteger:
			if f, ok := o.Value.(float64); ok && f >= 1 && f <= maxFactID && f == float64(int64(f)) {
				r.id = int64(f)
			}
		case o.Name == "member" && o.Type == discordgo.ApplicationCommandOptionUser:
			if v, ok := o.Value.(string); ok && isSnowflake(v) {
				r.member = v
			}
		}
	}
	return r
}

// parseMemoryPrefix reads "memory ACTION [ARG]" from a prefix command's topic; ok is false when
// the topic is not a memory command. ARG is forget's number, delete's fact id, or list's member
// (a mention or an id).
func parseMemoryPrefix(topic string) (r memoryRequest, ok bool) {
	f := strings.Fields(topic)
	if len(f) == 0 || !strings.EqualFold(f[0], memoryCommandName) {
		return memoryRequest{}, false
	}
	r.public = true
	if len(f) < 2 || len(f) > 3 {
		return r, true
	}
	r.action = strings.ToLower(f[1])
	if len(f) < 3 {
		return r, true
	}
	arg := f[2]
	switch r.action {
	case memForget:
		r.n = -1
		if v, err := strconv.Atoi(arg); err == nil && v >= 1 && v <= maxShownFacts {
			r.n = v
		}
	case memDelete:
		r.id = -1
		if v, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64); err == nil && v >= 1 && v <= maxFactID {
			r.id = v
		}
	case memList:
		r.member = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(arg, "<@"), "!"), ">")
		if !isSnowflake(r.member) {
			r.member = ""
		}
	}
	return r, true
}

// isSnowflake reports whether s is a Discord id: 1 to 20 digits.
func isSnowflake(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// memoryAction runs one action for a member of a guild and says what was done.
func (s *Service) memoryAction(ctx context.Context, cfg *config.Config, guild, userID string, r memoryRequest) string {
	if guild == "" {
		return "Memory works in servers only."
	}
	if s.opts.Memory != nil {
		defer s.opts.Memory.Invalidate(guild)
	}
	switch r.action {
	case memShow:
		if r.public {
			return "Use `/memory show`: I answer it where only you can see it."
		}
		return s.memoryShow(ctx, cfg, guild, userID)
	case memForget:
		return s.memoryForget(ctx, guild, userID, r.n)
	case memForgetMe:
		return s.memoryForgetMe(ctx, guild, userID, r.at)
	case memPause, memResume:
		return s.memoryPause(ctx, guild, userID, r.action == memPause)
	case memList, memDelete:
		return s.memoryAdmin(ctx, guild, userID, r)
	}
	return "Memory commands: show, forget <number>, forget-me, pause, resume; for server admins: list [member], delete <id>."
}

func (s *Service) memoryForgetMe(ctx context.Context, guild, userID string, at time.Time) string {
	s.names.forget(guild, userID)
	if s.opts.Memory != nil {
		s.opts.Memory.Drop(guild, userID)
	}
	// The command's time is the watermark: whatever of theirs is still in flight (an
	// extraction's answer, a transcript or message stored just after) and was said before it is
	// refused (store); what they said after it (read back by a catch-up when the command was
	// given while banter was down) is kept.
	if at.IsZero() {
		at = s.now()
	}
	r, err := s.opts.Store.ForgetMember(ctx, guild, userID, at)
	if err != nil {
		s.logger.Error("store_failed", "op", "forget_member", "guild_id", guild, "error", err.Error())
		return "Sorry, I couldn't forget that just now. Please try again."
	}
	s.logger.Info("memory_member_forgotten", "guild_id", guild, "facts", r.Facts, "messages", r.Messages, "replies", r.Replies)
	return fmt.Sprintf("Done. I forgot %s about you and %s of yours (and %d of my replies to them) in this server.",
		count(r.Facts, "fact", "facts"), count(r.Messages, "message", "messages"), r.Replies)
}

// count is n with the noun in its number: "1 fact", "2 facts".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func (s *Service) memoryPause(ctx context.Context, guild, userID string, paused bool) string {
	if err := s.opts.Store.SetMemoryPaused(ctx, guild, userID, paused, s.now()); err != nil {
		s.logger.Error("store_failed", "op", "set_memory_paused", "guild_id", guild, "error", err.Error())
		return "Sorry, I couldn't change that just now. Please try again."
	}
	if s.opts.Memory != nil {
		s.opts.Memory.NotePause(guild, userID, paused)
	}
	event := "memory_resumed"
	if paused {
		event = "memory_paused"
	}
	s.logger.Info(event, "guild_id", guild, "user_id", userID)
	if paused {
		return "Paused: I won't remember anything you say in this server, typed or in voice, until you run `/memory resume`."
	}
	return "Resumed: I'll remember what you tell me in this server again."
}

// memoryFacts are the member's current facts as /memory show numbers them.
func (s *Service) memoryFacts(ctx context.Context, guild, userID string) ([]store.Fact, error) {
	return s.opts.Store.Facts(ctx, store.FactQuery{GuildID: guild, SubjectIDs: []string{userID}, Limit: maxShownFacts})
}

func (s *Service) memoryShow(ctx context.Context, cfg *config.Config, guild, userID string) string {
	fs, err := s.memoryFacts(ctx, guild, userID)
	if err != nil {
		s.logger.Error("store_failed", "op", "facts", "guild_id", guild, "error", err.Error())
		return "Sorry, I couldn't read my notes just now."
	}
	var b strings.Builder
	if !cfg.Memory.EnabledFor(guild) {
		b.WriteString("Memory is off in this server.\n")
	}
	if paused, err := s.opts.Store.MemoryPaused(ctx, guild, userID); err == nil && paused {
		b.WriteString("Memory is paused for you here (`/memory resume` to resume).\n")
	}
	if len(fs) == 0 {
		b.WriteString("I don't remember anything about you in this server.")
		return b.String()
	}
	b.WriteString("What I remember about you in this server:\n")
	for i, f := range fs {
		fmt.Fprintf(&b, "%d. %s\n", i+1, f.Statement)
	}
	b.WriteString("`/memory forget number:N` forgets one; `/memory forget-me` forgets everything.")
	return b.String()
}

func (s *Service) memoryForget(ctx context.Context, guild, userID string, n int) string {
	if n < 1 {
		return "Which one? Give its number in `/memory show`."
	}
	fs, err := s.memoryFacts(ctx, guild, userID)
	if err != nil {
		s.logger.Error("store_failed", "op", "facts", "guild_id", guild, "error", err.Error())
		return "Sorry, I couldn't read my notes just now."
	}
	if n > len(fs) {
		return fmt.Sprintf("I have no fact number %d about you (see `/memory show`).", n)
	}
	if err := s.opts.Store.DeleteFact(ctx, guild, fs[n-1].ID); err != nil {
		s.logger.Error("store_failed", "op", "delete_fact", "guild_id", guild, "error", err.Error())
		return "Sorry, I couldn't forget that just now."
	}
	s.logger.Info("memory_fact_forgotten", "guild_id", guild, "fact_id", fs[n-1].ID)
	return fmt.Sprintf("Forgotten: fact %d.", n)
}

// handleMemoryPrefix answers a prefix memory command ("!banter memory forget-me") with a reply
// and reports whether content was one. The command message is not stored (nothing to remember).
// Neither is its answer, so the catch-up of a later process reads a command back when nothing
// newer was stored in its channel: one from before this process started is run only when the
// channel holds no answer to it (ranOnce), or a restart would forget again, forget another
// numbered fact, or pause again.
func (s *Service) handleMemoryPrefix(cfg *config.Config, m *discordgo.Message) bool {
	cmd := parsePrefixCommand(cfg, m.Content)
	if cmd == nil || cmd.persona != "" {
		return false
	}
	r, ok := parseMemoryPrefix(cmd.topic)
	if !ok {
		return false
	}
	if s.ranOnce(m) {
		s.opts.Metrics.ingested("memory_command")
		return true
	}
	r.admin = s.mayManage(m)
	r.at = m.Timestamp // as its message's CreatedAt is stored
	if r.at.IsZero() {
		r.at = snowflakeTime(m.ID)
	}
	reply := s.memoryAction(s.ctx, cfg, m.GuildID, m.Author.ID, r)
	if _, err := s.sender.Create(s.ctx, post.Message{ChannelID: m.ChannelID, GuildID: m.GuildID,
		Content: reply, ReplyTo: m.ID, Addressee: m.Author.ID, TurnID: m.ID, Nonce: turnNonce(m.ID, 'm', 0)}); err != nil {
		s.logger.Warn("memory_command_reply_failed", "message_id", m.ID, "channel_id", m.ChannelID, "reason", post.Refusal(err),
			"error", err.Error())
	}
	s.opts.Metrics.ingested("memory_command")
	return true
}

// ranOnce reports whether a memory command from before this process started was answered
// already (the bot's reply to it is in the channel), or cannot be told (the channel could not
// be read: a command that forgets is not run twice on a guess); each is logged.
func (s *Service) ranOnce(m *discordgo.Message) bool {
	if !snowflakeTime(m.ID).Before(s.started) {
		return false // arrived while this process runs: seen once (firstSight)
	}
	reply, err := s.earlierReply(s.ctx, store.Turn{MessageID: m.ID, ChannelID: m.ChannelID, AnswerID: m.ID})
	switch {
	case err != nil:
		s.logger.Warn("message_ignored", "reason", "memory_command_unverified", "message_id", m.ID, "channel_id", m.ChannelID,
			"error", err.Error())
		return true
	case reply != "":
		s.logger.Info("message_ignored", "reason", "memory_command_answered", "message_id", m.ID, "channel_id", m.ChannelID,
			"reply_id", reply)
		return true
	}
	return false
}
