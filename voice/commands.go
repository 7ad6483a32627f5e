package voice

import (
	"context"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/discord/post"
)

// Commands returns the slash commands the Service handles: /join [channel]
// and /leave. Register them with ApplicationCommandBulkOverwrite alongside
// the text pipeline's.
func (svc *Service) Commands() []*discordgo.ApplicationCommand {
	return []*discordgo.ApplicationCommand{
		{Name: "join", Description: "Join a voice channel (yours if none is given)", Options: []*discordgo.ApplicationCommandOption{{
			Type: discordgo.ApplicationCommandOptionChannel, Name: "channel", Description: "Voice channel to join",
			ChannelTypes: []discordgo.ChannelType{discordgo.ChannelTypeGuildVoice, discordgo.ChannelTypeGuildStageVoice},
		}}},
		{Name: "leave", Description: "Leave the voice channel"},
	}
}

// HandleInteraction handles /join and /leave and reports whether it did;
// other interactions are left to the caller. It acknowledges at once
// (ephemeral, within Discord's 3 s) and joins or leaves on a goroutine of the
// Service, never on the gateway's event goroutine (a join waits for gateway
// events); the outcome follows up on the interaction.
func (svc *Service) HandleInteraction(ctx context.Context, s *discordgo.Session, i *discordgo.Interaction) bool {
	if i.Type != discordgo.InteractionApplicationCommand || i.GuildID == "" {
		return false
	}
	data := i.ApplicationCommandData()
	var work func() string
	switch data.Name {
	case "join":
		ch, who := channelOption(data.Options), ""
		if i.Member != nil && i.Member.User != nil {
			who = i.Member.User.ID
			if ch == "" {
				ch = svc.userVoiceChannel(s, i.GuildID, who)
			}
		}
		work = func() string { return svc.commandJoin(svc.ctx, i.GuildID, ch, who) }
	case "leave":
		work = func() string { return svc.commandLeave(svc.ctx, i.GuildID) }
	default:
		return false
	}
	err := s.InteractionRespond(i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}}, discordgo.WithContext(ctx))
	if err != nil {
		svc.log.Warn("voice_command_reply_failed", "command", data.Name, "error", err)
		return true
	}
	svc.wg.Go(func() {
		msg := work()
		if _, err := s.InteractionResponseEdit(i, &discordgo.WebhookEdit{Content: &msg}, discordgo.WithContext(svc.ctx)); err != nil {
			svc.log.Warn("voice_command_reply_failed", "command", data.Name, "error", err)
		}
	})
	return true
}

// channelOption returns the value of /join's "channel" option, "" when
// there is none. The options come from Discord users: an option of another
// type, or without a string value, is ignored.
func channelOption(opts []*discordgo.ApplicationCommandInteractionDataOption) string {
	ch := ""
	for _, o := range opts {
		if o == nil || o.Name != "channel" || o.Type != discordgo.ApplicationCommandOptionChannel {
			continue
		}
		if v, ok := o.Value.(string); ok {
			ch = v
		}
	}
	return ch
}

// HandleMessage handles the text commands <prefix>join and <prefix>leave
// (prefix is bot.commandPrefix, e.g. "!join") and reports whether it did.
// The work and the reply run on a goroutine of the Service.
func (svc *Service) HandleMessage(ctx context.Context, s *discordgo.Session, m *discordgo.Message) bool {
	if m.GuildID == "" || m.Author == nil || m.Author.Bot {
		return false
	}
	prefix := svc.cfg().Bot.CommandPrefix
	if prefix == "" {
		prefix = "!"
	}
	var work func() string
	switch strings.TrimSpace(strings.ToLower(m.Content)) {
	case prefix + "join":
		ch := svc.userVoiceChannel(s, m.GuildID, m.Author.ID)
		work = func() string { return svc.commandJoin(svc.ctx, m.GuildID, ch, m.Author.ID) }
	case prefix + "leave":
		work = func() string { return svc.commandLeave(svc.ctx, m.GuildID) }
	default:
		return false
	}
	svc.wg.Go(func() {
		msg := work()
		reply := post.Message{ChannelID: m.ChannelID, GuildID: m.GuildID, ReplyTo: m.ID, Addressee: m.Author.ID, Content: msg, TurnID: m.ID}
		if _, err := svc.opts.Sender.Create(svc.ctx, reply); err != nil {
			svc.log.Warn("voice_command_reply_failed", "channel_id", m.ChannelID, "reason", post.Refusal(err), "error", err)
		}
	})
	return true
}

// commandJoin joins channelID on userID's request: the session is kept across restarts
// (Options.KeptSessions) until it ends for a reason that means "stay out".
func (svc *Service) commandJoin(ctx context.Context, guildID, channelID, userID string) string {
	if !svc.cfg().Voice.Enabled {
		return "Voice is turned off."
	}
	if channelID == "" {
		return "Join a voice channel first, or name one."
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := svc.join(ctx, guildID, channelID, joinHow{keep: true, requestedBy: userID}); err != nil {
		svc.log.Warn("voice_join_failed", "guild_id", guildID, "channel_id", channelID, "error", err)
		return "I couldn't join that channel."
	}
	return "Joined <#" + channelID + ">."
}

func (svc *Service) commandLeave(ctx context.Context, guildID string) string {
	if svc.Channel(guildID) == "" {
		return "I'm not in a voice channel."
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := svc.Leave(ctx, guildID); err != nil {
		svc.log.Warn("voice_leave_failed", "guild_id", guildID, "error", err)
		return "I couldn't leave cleanly."
	}
	return "Left the voice channel."
}

// userVoiceChannel returns the voice channel userID is in, from the gateway
// state ("" if unknown). discordgo updates voice states in place under the
// state's lock, so they are read under it.
func (svc *Service) userVoiceChannel(s *discordgo.Session, guildID, userID string) string {
	return VoiceChannelOf(s.State, guildID, userID)
}

// VoiceChannelOf returns the voice channel userID is in according to st
// ("" if unknown), reading under st's lock: discordgo's State.VoiceState
// returns a pointer that its event handler then updates in place.
func VoiceChannelOf(st *discordgo.State, guildID, userID string) string {
	g, err := st.Guild(guildID)
	if err != nil || g == nil {
		return ""
	}
	st.RLock()
	defer st.RUnlock()
	for _, vs := range g.VoiceStates {
		if vs != nil && vs.UserID == userID {
			return vs.ChannelID
		}
	}
	return ""
}
