package budget

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/store"
)

// Interactions is the slice of discordgo the /spend command needs; *discordgo.Session has it.
type Interactions interface {
	InteractionRespond(interaction *discordgo.Interaction, resp *discordgo.InteractionResponse, options ...discordgo.RequestOption) error
}

// adminPermissions are the permissions that make a member a budget admin.
const adminPermissions = discordgo.PermissionAdministrator | discordgo.PermissionManageGuild

// Commands is /spend, for registration at start. Its default_member_permissions is Manage
// Server, so Discord offers it only to members who can manage the server (and to
// Administrators) unless a server's admins change that in its Integrations settings; which
// is why HandleInteraction checks the permissions again when it is used.
func (g *Guard) Commands() []*discordgo.ApplicationCommand {
	noDM := false
	manage := int64(discordgo.PermissionManageGuild)
	return []*discordgo.ApplicationCommand{{Name: "spend", DMPermission: &noDM, DefaultMemberPermissions: &manage,
		Description: "Today's model spend of this server and of all servers, by model slot (admins)"}}
}

// HandleInteraction answers /spend (ephemeral) and reports whether the interaction was it.
// Members without Manage Server or Administrator are told so, and shown nothing.
func (g *Guard) HandleInteraction(ctx context.Context, api Interactions, i *discordgo.Interaction) bool {
	if i.Type != discordgo.InteractionApplicationCommand || i.ApplicationCommandData().Name != "spend" {
		return false
	}
	var reply string
	switch {
	case i.GuildID == "" || i.Member == nil:
		reply = "/spend works in a server."
	case i.Member.Permissions&adminPermissions == 0:
		reply = "Only members who can manage this server can see its spend."
	default:
		reply = g.report(ctx, i.GuildID)
	}
	err := api.InteractionRespond(i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: reply, Flags: discordgo.MessageFlagsEphemeral,
			AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}},
	}, discordgo.WithContext(ctx))
	if err != nil {
		g.log.Warn("slash_command_response_failed", "command", "spend", "error", err.Error())
	}
	return true
}

// report renders the day's spend of guild and of every guild, by slot.
func (g *Guard) report(ctx context.Context, guild string) string {
	b := &g.opts.Config().Budget
	day := b.Day(g.opts.Now())
	rows, err := g.opts.Ledger.DaySpend(ctx, day)
	if err != nil {
		g.log.Warn("budget_unreadable", "error", err.Error())
		return "I can't read today's spend just now."
	}
	st := g.State(ctx, guild)
	var mine, all []store.Spend
	bySlot := map[string]float64{}
	for _, r := range rows {
		if r.Guild == guild {
			mine = append(mine, r)
		}
		bySlot[r.Slot] += r.USD
	}
	for slot, usd := range bySlot {
		all = append(all, store.Spend{Slot: slot, USD: usd})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Slot < all[j].Slot })
	var sb strings.Builder
	fmt.Fprintf(&sb, "Spend on budget day %s (from %02d:00 %s); status: %s\n", day, b.ResetHour, b.TimeZone, st.Level)
	section(&sb, "This server", st.GuildUSD, st.GuildCap, mine)
	section(&sb, "All servers", st.AllUSD, st.GlobalCap, all)
	return truncate(sb.String(), 2000)
}

// section writes one total with its cap and its slots.
func section(sb *strings.Builder, title string, total, limit float64, rows []store.Spend) {
	fmt.Fprintf(sb, "**%s**: %s", title, usd(total))
	if limit > 0 {
		fmt.Fprintf(sb, " of %s (%.0f%%)", usd(limit), 100*total/limit)
	} else {
		sb.WriteString(" (no cap)")
	}
	sb.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(sb, "- %s: %s\n", r.Slot, usd(r.USD))
	}
}

func usd(v float64) string { return fmt.Sprintf("$%.4f", v) }

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
