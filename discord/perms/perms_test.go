package perms

import (
	"testing"

	"github.com/bwmarrin/discordgo"
)

// TestInChannel: Discord's permission algorithm over a session's state, including what
// discordgo's own UserChannelPermissions gets wrong (an Administrator's overwrites, a thread
// taking its parent's), and the cases the state cannot tell.
func TestInChannel(t *testing.T) {
	const (
		guild, bot, owner, role, admin = "1", "10", "11", "20", "21"
		text, thread, unknown          = "30", "31", "39"
		view, send                     = discordgo.PermissionViewChannel, discordgo.PermissionSendMessages
		history, inThreads             = discordgo.PermissionReadMessageHistory, discordgo.PermissionSendMessagesInThreads
		everyone                       = view | send | history | inThreads
	)
	tests := []struct {
		name       string
		botRoles   []string
		overwrites []*discordgo.PermissionOverwrite
		user, ch   string
		unavail    bool
		want       int64
		wantOK     bool
		refusal    string
		readable   bool
	}{
		{name: "@everyone's permissions", user: bot, ch: text, want: everyone, wantOK: true, readable: true},
		{name: "member overwrite denies send", user: bot, ch: text, wantOK: true, want: everyone &^ send, readable: true, refusal: "missing_permissions",
			overwrites: []*discordgo.PermissionOverwrite{{ID: bot, Type: discordgo.PermissionOverwriteTypeMember, Deny: send}}},
		{name: "@everyone overwrite denies view", user: bot, ch: text, wantOK: true, want: everyone &^ view, refusal: "missing_access",
			overwrites: []*discordgo.PermissionOverwrite{{ID: guild, Type: discordgo.PermissionOverwriteTypeRole, Deny: view}}},
		{name: "role overwrite allows back what @everyone's denied", user: bot, ch: text, botRoles: []string{role}, wantOK: true, want: everyone, readable: true,
			overwrites: []*discordgo.PermissionOverwrite{{ID: guild, Type: discordgo.PermissionOverwriteTypeRole, Deny: view},
				{ID: role, Type: discordgo.PermissionOverwriteTypeRole, Allow: view}}},
		{name: "member overwrite beats the role's allow", user: bot, ch: text, botRoles: []string{role}, wantOK: true, want: everyone &^ send, readable: true, refusal: "missing_permissions",
			overwrites: []*discordgo.PermissionOverwrite{{ID: role, Type: discordgo.PermissionOverwriteTypeRole, Allow: send},
				{ID: bot, Type: discordgo.PermissionOverwriteTypeMember, Deny: send}}},
		{name: "administrator ignores overwrites", user: bot, ch: text, botRoles: []string{admin}, wantOK: true, want: all, readable: true,
			overwrites: []*discordgo.PermissionOverwrite{{ID: bot, Type: discordgo.PermissionOverwriteTypeMember, Deny: view | send}}},
		{name: "the owner holds everything", user: owner, ch: text, wantOK: true, want: all, readable: true,
			overwrites: []*discordgo.PermissionOverwrite{{ID: owner, Type: discordgo.PermissionOverwriteTypeMember, Deny: view}}},
		{name: "no read message history: may send, may not reference", user: bot, ch: text, wantOK: true, want: everyone &^ history,
			overwrites: []*discordgo.PermissionOverwrite{{ID: bot, Type: discordgo.PermissionOverwriteTypeMember, Deny: history}}},
		{name: "a thread takes its parent's overwrites", user: bot, ch: thread, wantOK: true, want: everyone &^ history, refusal: "",
			overwrites: []*discordgo.PermissionOverwrite{{ID: bot, Type: discordgo.PermissionOverwriteTypeMember, Deny: history}}},
		{name: "a thread needs send messages in threads", user: bot, ch: thread, wantOK: true, want: everyone &^ inThreads, readable: true, refusal: "missing_permissions",
			overwrites: []*discordgo.PermissionOverwrite{{ID: bot, Type: discordgo.PermissionOverwriteTypeMember, Deny: inThreads}}},
		{name: "unknown channel", user: bot, ch: unknown},
		{name: "unknown member", user: "99", ch: text},
		{name: "guild unavailable (after READY)", user: bot, ch: text, unavail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := discordgo.NewState()
			g := &discordgo.Guild{ID: guild, OwnerID: owner, Unavailable: tt.unavail,
				Roles:    []*discordgo.Role{{ID: guild, Permissions: everyone}, {ID: role}, {ID: admin, Permissions: discordgo.PermissionAdministrator}},
				Channels: []*discordgo.Channel{{ID: text, GuildID: guild, Type: discordgo.ChannelTypeGuildText, PermissionOverwrites: tt.overwrites}},
				Members: []*discordgo.Member{{GuildID: guild, User: &discordgo.User{ID: bot}, Roles: tt.botRoles},
					{GuildID: guild, User: &discordgo.User{ID: owner}}},
			}
			if tt.unavail {
				g.Roles = nil
			}
			if err := st.GuildAdd(g); err != nil {
				t.Fatal(err)
			}
			if err := st.ChannelAdd(&discordgo.Channel{ID: thread, GuildID: guild, ParentID: text, Type: discordgo.ChannelTypeGuildPublicThread}); err != nil {
				t.Fatal(err)
			}
			got, ok := InChannel(st, tt.user, tt.ch)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("InChannel = %b, %v; want %b, %v", got, ok, tt.want, tt.wantOK)
			}
			if r := SendRefusal(st, tt.user, tt.ch); r != tt.refusal {
				t.Errorf("SendRefusal = %q, want %q", r, tt.refusal)
			}
			if r, rok := Readable(st, tt.user, tt.ch); r != tt.readable || rok != tt.wantOK {
				t.Errorf("Readable = %v, %v; want %v, %v", r, rok, tt.readable, tt.wantOK)
			}
			if may, mok := MayReference(st, tt.user, tt.ch); may != tt.readable || mok != tt.wantOK {
				t.Errorf("MayReference = %v, %v; want %v, %v", may, mok, tt.readable, tt.wantOK)
			}
		})
	}
}
