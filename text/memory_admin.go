package text

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/store"
)

// Server admins' side of /memory (docs/memory.md): list the facts remembered in their server,
// of every member or of one, with their ids, and delete one by id. A member without Manage
// Server (or Administrator) is refused and shown nothing.

// adminPermissions make a member a server admin for /memory list and delete (as for /spend).
const adminPermissions = discordgo.PermissionAdministrator | discordgo.PermissionManageGuild

// maxListedFacts bounds /memory list (newest first; the answer is cut to Discord's 2000
// characters besides).
const maxListedFacts = 40

// mayManage reports whether a prefix command's author may manage the server, from the
// session's state: the guild's roles and owner, the member's roles the message carries. When
// the state cannot tell, the answer is no.
func (s *Service) mayManage(m *discordgo.Message) bool {
	st := s.state.Load()
	if st == nil || m.GuildID == "" || m.Author == nil || m.Member == nil {
		return false
	}
	perms, err := st.MessagePermissions(m)
	return err == nil && perms&adminPermissions != 0
}

// memoryAdmin runs list or delete for a server admin.
func (s *Service) memoryAdmin(ctx context.Context, guild, userID string, r memoryRequest) string {
	if !r.admin {
		return "Only members who can manage this server can list or delete its facts."
	}
	if r.action == memList {
		if r.public {
			return "Use `/memory list`: I answer it where only you can see it."
		}
		return s.memoryList(ctx, guild, r.member)
	}
	if r.id < 1 {
		return "Which one? Give its id in `/memory list`."
	}
	err := s.opts.Store.DeleteFact(ctx, guild, r.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Sprintf("There is no fact #%d in this server.", r.id)
	case err != nil:
		s.logger.Error("store_failed", "op", "delete_fact", "guild_id", guild, "error", err.Error())
		return "Sorry, I couldn't delete that just now."
	}
	s.logger.Info("memory_fact_deleted", "guild_id", guild, "fact_id", r.id, "by_user_id", userID)
	return fmt.Sprintf("Deleted fact #%d.", r.id)
}

// memoryList renders the guild's current facts (of one member when named), newest first.
func (s *Service) memoryList(ctx context.Context, guild, member string) string {
	q := store.FactQuery{GuildID: guild, Limit: maxListedFacts}
	if member != "" {
		q.SubjectIDs = []string{member}
	}
	fs, err := s.opts.Store.Facts(ctx, q)
	if err != nil {
		s.logger.Error("store_failed", "op", "facts", "guild_id", guild, "error", err.Error())
		return "Sorry, I couldn't read my notes just now."
	}
	var b strings.Builder
	if !s.cfg().Memory.EnabledFor(guild) {
		b.WriteString("Memory is off in this server.\n")
	}
	switch {
	case len(fs) == 0 && member != "":
		b.WriteString("I remember nothing about that member here.")
		return b.String()
	case len(fs) == 0:
		b.WriteString("I remember nothing here.")
		return b.String()
	}
	fmt.Fprintf(&b, "Facts remembered in this server, newest first (id · about · fact):\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "#%d · %s · %s (%s)\n", f.ID, subjectOf(f), f.Statement, f.CreatedAt.UTC().Format("2006-01-02"))
	}
	if len(fs) == maxListedFacts {
		fmt.Fprintf(&b, "(the newest %d; name a member to see theirs)\n", maxListedFacts)
	}
	b.WriteString("`/memory delete id:N` deletes one.")
	return b.String()
}

// subjectOf names a fact's subject for an admin: the member's name and id, or the server.
func subjectOf(f store.Fact) string {
	switch {
	case f.SubjectID == store.FactServer:
		return "the server"
	case f.SubjectName != "":
		return fmt.Sprintf("%s (%s)", f.SubjectName, f.SubjectID)
	}
	return f.SubjectID
}
