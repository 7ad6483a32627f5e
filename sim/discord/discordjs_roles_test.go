package discordsim

import (
	"slices"
	"testing"
)

// TestDiscordJSRoles runs the unmodified discord.js 14 client in interop/discordjs/roles.mjs,
// logged in as the bot without GUILD_MEMBERS, and changes roles while it is connected: the
// bot's managed role (GUILD_ROLE_CREATE, then the bot's own GUILD_MEMBER_UPDATE, which
// discord.js must get without the intent to know its role), another role created, updated and
// deleted. Each change must land in discord.js's cache.
func TestDiscordJSRoles(t *testing.T) {
	w := newWorld(t)
	n := startNode(t, "roles.mjs",
		"SIM_API="+w.sim.APIBaseURL()+"/api",
		"SIM_TOKEN="+w.sim.Token(),
		"SIM_GUILD="+string(w.guild),
	)
	var l struct {
		GuildCached bool     `json:"guildCached"`
		ID          RoleID   `json:"id"`
		Name        string   `json:"name"`
		Managed     bool     `json:"managed"`
		BotID       UserID   `json:"botId"`
		Permissions string   `json:"permissions"`
		Roles       []RoleID `json:"roles"`
		BotRole     RoleID   `json:"botRole"`
		Cached      bool     `json:"cached"`
	}
	next := func(event string) {
		t.Helper()
		l.ID, l.Name, l.Roles, l.BotRole = "", "", nil, ""
		n.wait(event, func(nl nodeLine) bool { nl.decode(t, &l); return nl.Event == event })
	}
	next("ready")
	if !l.GuildCached {
		t.Fatal("discord.js has no guild after READY")
	}
	own, err := w.sim.CreateBotRole(w.guild)
	must(t, err)
	next("roleCreate")
	if l.ID != own || !l.Managed || l.BotID != w.sim.BotID() || l.Name != "simbot" {
		t.Errorf("discord.js cached the bot's role as %+v", l)
	}
	next("meUpdate")
	if !slices.Contains(l.Roles, own) || l.BotRole != own {
		t.Errorf("discord.js's own member: roles %v, botRole %q; want %s in both", l.Roles, l.BotRole, own)
	}
	mods, err := w.sim.CreateRole(w.guild, "mods")
	must(t, err)
	next("roleCreate")
	if l.ID != mods || l.Name != "mods" || l.Managed {
		t.Errorf("discord.js cached mods as %+v", l)
	}
	must(t, w.sim.SetRolePermissions(w.guild, mods, "8"))
	next("roleUpdate")
	if l.ID != mods || l.Permissions != "8" {
		t.Errorf("discord.js's mods after the update: %+v, want permissions 8", l)
	}
	must(t, w.sim.DeleteRole(w.guild, mods))
	next("roleDelete")
	if l.ID != mods || l.Cached {
		t.Errorf("discord.js after the deletion: %+v, want mods gone from its cache", l)
	}
	n.exit()
}
