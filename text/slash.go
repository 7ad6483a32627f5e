package text

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
)

// Interactions is the slice of discordgo the slash commands need. *discordgo.Session
// satisfies it.
type Interactions interface {
	InteractionRespond(interaction *discordgo.Interaction, resp *discordgo.InteractionResponse, options ...discordgo.RequestOption) error
}

var _ Interactions = (*discordgo.Session)(nil)

// Discord's limits on application command fields, in characters.
const (
	maxCommandName        = 32
	maxCommandDescription = 100
	maxResponseContent    = 2000
)

// Commands are the text pipeline's slash commands, for registration at start. Every field
// stays within Discord's limits whatever bot.name is (a name too long for the description is
// left out of it): Discord refuses the whole registration otherwise.
func (s *Service) Commands() []*discordgo.ApplicationCommand {
	opt := func(name, desc string, maxLen int) *discordgo.ApplicationCommandOption {
		return &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionString, Name: name, Description: desc, MaxLength: maxLen}
	}
	return []*discordgo.ApplicationCommand{{
		Name:        "persona",
		Description: personaDescription(s.cfg().Bot.Name),
		Options: []*discordgo.ApplicationCommandOption{
			opt("preferred_name", "What to call you", 64),
			opt("pronouns", "Your pronouns", 32),
			opt("about", "A line about you", 200),
		},
	}, memoryCommand()}
}

// personaDescription describes /persona with the bot's name when it fits Discord's 100
// characters, else without it.
func personaDescription(name string) string {
	d := "Tell " + strings.TrimSpace(name) + " how you'd like to be known (no options: show what it knows)"
	if utf8.RuneCountInString(d) <= maxCommandDescription {
		return d
	}
	return "Tell the bot how you'd like to be known (no options: show what it knows)"
}

// HandleInteraction answers the text pipeline's slash commands and reports whether it handled
// the interaction.
func (s *Service) HandleInteraction(ctx context.Context, api Interactions, i *discordgo.Interaction) bool {
	if i.Type != discordgo.InteractionApplicationCommand {
		return false
	}
	data := i.ApplicationCommandData()
	if data.Name != "persona" && data.Name != memoryCommandName {
		return false
	}
	user := i.User
	if i.Member != nil && i.Member.User != nil {
		user = i.Member.User
	}
	if user == nil {
		return false
	}
	var reply string
	if data.Name == memoryCommandName {
		r := memoryInteraction(data)
		r.admin = i.Member != nil && i.Member.Permissions&adminPermissions != 0
		r.at = snowflakeTime(i.ID)
		reply = s.memoryAction(ctx, s.cfg(), i.GuildID, user.ID, r)
	} else {
		reply = s.personaCommand(ctx, user, data.Options)
	}
	err := api.InteractionRespond(i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{
			Content:         truncateRunes(reply, maxResponseContent),
			Flags:           discordgo.MessageFlagsEphemeral,
			AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}},
		},
	}, discordgo.WithContext(ctx))
	if err != nil {
		s.logger.Error("interaction_respond_failed", "command", data.Name, "user_id", user.ID, "error", err.Error())
	}
	return true
}

// personaCommand saves the options given (merging with what was on file) and describes the
// result, with the bot personas available.
func (s *Service) personaCommand(ctx context.Context, user *discordgo.User, opts []*discordgo.ApplicationCommandInteractionDataOption) string {
	cfg := s.cfg()
	existing, err := s.opts.Store.Personas(ctx, []string{user.ID})
	if err != nil {
		s.logger.Error("store_failed", "op", "personas", "error", err.Error())
		return "Sorry, I couldn't read my notes just now."
	}
	p, had := existing[user.ID]
	p.UserID = user.ID
	given := 0
	for _, o := range opts {
		// The options come from Discord users: an option of another type than
		// registered (a stale registration, a crafted payload) or without a
		// string value is ignored. discordgo's StringValue would panic on it.
		if o == nil || o.Type != discordgo.ApplicationCommandOptionString {
			continue
		}
		raw, ok := o.Value.(string)
		if !ok {
			continue
		}
		v := strings.TrimSpace(raw)
		switch o.Name {
		case "preferred_name":
			p.PreferredName = v
		case "pronouns":
			p.Pronouns = v
		case "about":
			p.Description = v
		default:
			continue
		}
		given++
	}
	if given > 0 {
		p.UpdatedAt = s.now()
		if err := s.opts.Store.SavePersona(ctx, p); err != nil {
			s.logger.Error("store_failed", "op", "save_persona", "error", err.Error())
			return "Sorry, I couldn't save that just now."
		}
		s.logger.Info("persona_saved", "user_id", user.ID)
		had = true
	}
	var b strings.Builder
	if had {
		fmt.Fprintf(&b, "Noted. I know you as: %s.", p.Summary())
	} else {
		b.WriteString("I don't have anything on file for you yet. Use the options to tell me what to call you.")
	}
	fmt.Fprintf(&b, "\nMy personas: %s (default %s). Ask for one with `%s%s(Name) topic`.",
		strings.Join(cfg.PersonaNames(), ", "), cfg.Bot.Persona, cfg.Bot.CommandPrefix, cfg.Bot.Name)
	return b.String()
}

// truncateRunes cuts s to at most n characters, the last one an ellipsis when cut.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
