package discordsim

import (
	"slices"
	"testing"
)

// TestDiscordJSRoles runs the unmodified discord.js 14 client in interop/discordjs/roles.mjs,
// logged in as the bot without GUILD_MEMBERS, and changes roles while it is connected: the
// bot's managed role (GUILD_ROLE_CREATE, then the bot's own GUILD_MEMBER_UPDATE, which
// discord.js must get without the intent to know its role), another role created, updated and
// deleted. Each change must land in discord.js's cache; a new role comes at position 1, below
// the older roles.
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
		RawPosition int      `json:"rawPosition"`
		Position    int      `json:"position"`
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
	if l.ID != own || !l.Managed || l.BotID != w.sim.BotID() || l.Name != "simbot" || l.RawPosition != 1 {
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
	// Made at position 1 like the bot's role, which moved nowhere: discord.js ranks the newer
	// role lower, just above @everyone.
	if l.RawPosition != 1 || l.Position != 1 {
		t.Errorf("discord.js has mods at rawPosition %d, position %d; want 1 and 1 (the lowest above @everyone)", l.RawPosition, l.Position)
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

// TestDiscordJSKickAndOutage runs the unmodified discord.js 14 client in
// interop/discordjs/guild.mjs, logged in as the bot with GUILD_MEMBERS, GUILD_PRESENCES (every member in GUILD_CREATE) and GUILD_VOICE_STATES:
// a member in voice is removed (discord.js must drop the member and its voice state, and hear
// of the voice state's end after GUILD_MEMBER_REMOVE without putting the member back), then the
// guild goes through an outage during which roles, members' roles and nicknames and membership
// change: discord.js must get nothing for them until the GUILD_CREATE that ends the outage, and
// then hold them all.
func TestDiscordJSKickAndOutage(t *testing.T) {
	w := newWorld(t)
	bob, carol := w.sim.CreateUser("bob"), w.sim.CreateUser("carol")
	must(t, w.sim.AddMember(w.guild, bob))
	if _, err := w.sim.JoinVoice(bob, w.voice); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, "guild.mjs",
		"SIM_API="+w.sim.APIBaseURL()+"/api",
		"SIM_TOKEN="+w.sim.Token(),
		"SIM_GUILD="+string(w.guild),
	)
	var ready struct {
		Voice []struct {
			User    UserID    `json:"user"`
			Channel ChannelID `json:"channel"`
		} `json:"voice"`
	}
	n.wait("ready", func(nl nodeLine) bool { nl.decode(t, &ready); return nl.Event == "ready" })
	if len(ready.Voice) != 1 || ready.Voice[0].User != bob || ready.Voice[0].Channel != w.voice {
		t.Fatalf("discord.js's voice states at READY: %+v, want bob in %s", ready.Voice, w.voice)
	}

	must(t, w.sim.RemoveMember(w.guild, bob))
	type kickLine struct {
		ID           UserID     `json:"id"`
		OldChannel   *ChannelID `json:"oldChannel"`
		NewChannel   *ChannelID `json:"newChannel"`
		MemberCached bool       `json:"memberCached"`
		VoiceChannel *ChannelID `json:"voiceChannel"`
	}
	var l kickLine
	first := n.wait("the kick", func(nl nodeLine) bool {
		return nl.Event == "memberRemove" || nl.Event == "voiceStateUpdate"
	})
	first.decode(t, &l)
	if first.Event != "memberRemove" || l.ID != bob {
		t.Fatalf("first after the kick: %s %+v, want bob's memberRemove", first.Event, l)
	}
	l = kickLine{}
	n.wait("voiceStateUpdate", func(nl nodeLine) bool { nl.decode(t, &l); return nl.Event == "voiceStateUpdate" })
	if l.ID != bob || l.NewChannel != nil || l.MemberCached || l.VoiceChannel != nil {
		t.Errorf("bob's voiceStateUpdate: %+v, want no channel, and bob neither a cached member nor in voice", l)
	}

	must(t, w.sim.SetGuildAvailable(w.guild, false))
	n.wait("unavailable", func(nl nodeLine) bool { return nl.Event == "unavailable" })
	mods, err := w.sim.CreateRole(w.guild, "mods")
	must(t, err)
	must(t, w.sim.SetRolePermissions(w.guild, mods, "8"))
	must(t, w.sim.GiveRole(w.guild, w.alice, mods))
	must(t, w.sim.SetNick(w.guild, w.alice, "ali"))
	must(t, w.sim.AddMember(w.guild, carol))
	must(t, w.sim.SetGuildAvailable(w.guild, true))
	type jsRole struct {
		ID          RoleID `json:"id"`
		RawPosition int    `json:"rawPosition"`
	}
	var av struct {
		Roles   []jsRole `json:"roles"`
		Members []struct {
			ID    UserID   `json:"id"`
			Roles []RoleID `json:"roles"`
			Nick  *string  `json:"nick"`
		} `json:"members"`
		DuringOutage []string `json:"duringOutage"`
	}
	n.wait("available", func(nl nodeLine) bool { nl.decode(t, &av); return nl.Event == "available" })
	if len(av.DuringOutage) != 0 {
		t.Errorf("discord.js emitted %v while the guild was unavailable, want nothing", av.DuringOutage)
	}
	if !slices.Contains(av.Roles, jsRole{mods, 1}) {
		t.Errorf("discord.js's roles after the outage: %+v, want mods at rawPosition 1", av.Roles)
	}
	found := map[UserID]bool{}
	for _, m := range av.Members {
		found[m.ID] = true
		if m.ID == w.alice && (!slices.Equal(m.Roles, []RoleID{mods}) || m.Nick == nil || *m.Nick != "ali") {
			t.Errorf("alice in discord.js after the outage: %+v, want roles [mods] and nick ali", m)
		}
	}
	if !found[carol] || !found[w.alice] || found[bob] {
		t.Errorf("discord.js's members after the outage: %+v, want alice and carol, not bob", av.Members)
	}
	n.exit()
}
