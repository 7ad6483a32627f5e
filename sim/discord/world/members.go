package world

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Modify Guild Member (PATCH /guilds/{g}/members/{u}) and Modify Current Member (PATCH
// /guilds/{g}/members/@me): a member's nickname, roles and voice state changed in one request,
// all or nothing.
// https://discord.com/developers/docs/resources/guild#modify-guild-member

// MemberEdit is one Modify Guild Member request as the world applies it: nil fields are left
// as they are.
type MemberEdit struct {
	// Nick sets the nickname; "" clears it.
	Nick *string
	// Roles, when not nil, is the member's whole list of roles.
	Roles []RoleID
	// Voice moves, disconnects, server-mutes or server-deafens the member, who must be in voice.
	Voice VoiceEdit
}

// MemberEditResult is what ModifyMember did to the member's voice state, for the transport's
// voice signalling: a move hands out a fresh voice token, a disconnect revokes the voice
// session.
type MemberEditResult struct {
	// Voice is the member's voice state after the edit, when InVoice.
	Voice   VoiceState
	InVoice bool
	// Moved: the member changed voice channel; Disconnected: the edit took it out of voice.
	Moved, Disconnected bool
}

// ModifyMember applies a Modify Guild Member request by the REST caller by ("" for the
// world's own scripting, which needs no permission) to member u of g, as Discord does: the
// whole request is checked before anything changes, so a refused field (the first one found,
// in the order nick, roles, voice) leaves the member as it was, and an accepted request applies
// every field. The checks: nick as ChangeNick, roles as ChangeMemberRoles, the voice fields
// as planVoiceLocked says (the member must be in voice: 400 40032). It reports one
// MemberUpdated (GUILD_MEMBER_UPDATE) when the nick or the roles changed, then one
// VoiceStateChanged (VOICE_STATE_UPDATE, announced to the gateway session announce whatever
// its intents: the member's own, so that a bot hears of its move) when the voice state
// changed. A server mute or deafen is set on the member (Member.Mute, Member.Deaf) and so
// outlives its time in voice.
func (w *World) ModifyMember(by UserID, g GuildID, u UserID, e MemberEdit, announce string) (MemberEditResult, error) {
	w.lock()
	defer w.mu.Unlock()
	const op = "modify member"
	gd, m, err := w.memberLocked(op, g, u)
	if err != nil {
		switch {
		case by == "":
			return MemberEditResult{}, err
		case w.st.guilds[g] == nil:
			return MemberEditResult{}, ErrUnknownGuild
		}
		return MemberEditResult{}, ErrUnknownMember
	}
	// Check everything first: nothing changes unless every field may.
	if e.Nick != nil {
		if err := w.checkNickLocked(by, gd, u, *e.Nick); err != nil {
			return MemberEditResult{}, err
		}
	}
	roles, rolesChanged := m.Roles, false
	if e.Roles != nil {
		set := e.Roles
		whole := func([]RoleID) []RoleID { return append([]RoleID(nil), set...) }
		if roles, rolesChanged, err = w.planRolesLocked(op, by, gd, m, whole, set); err != nil {
			return MemberEditResult{}, err
		}
	}
	cur := gd.voice[u]
	var next VoiceState
	var leave bool
	if e.Voice != (VoiceEdit{}) {
		if next, leave, err = w.planVoiceLocked(by, gd, u, e.Voice); err != nil {
			return MemberEditResult{}, err
		}
	}

	// Apply.
	nickChanged := e.Nick != nil && *e.Nick != m.Nick
	if nickChanged {
		m.Nick = *e.Nick
	}
	if rolesChanged {
		m.Roles = roles
	}
	if nickChanged || rolesChanged {
		w.emitLocked(MemberUpdated{Guild: g, User: u})
	}
	var res MemberEditResult
	if cur != nil {
		res.Voice, res.InVoice = *cur, true
	}
	switch {
	case e.Voice == (VoiceEdit{}):
	case leave:
		m.Mute, m.Deaf = next.Mute, next.Deaf
		delete(gd.voice, u)
		w.emitLocked(VoiceStateChanged{Guild: g, User: u, Session: announce})
		res = MemberEditResult{Disconnected: true}
	case next != *cur:
		m.Mute, m.Deaf = next.Mute, next.Deaf
		st, snap := next, next
		gd.voice[u] = &st
		w.emitLocked(VoiceStateChanged{Guild: g, User: u, State: &snap, Session: announce})
		res = MemberEditResult{Voice: next, InVoice: true, Moved: next.Channel != cur.Channel}
	}
	return res, nil
}

// SetNick sets a member's nickname in a guild ("" clears it; GUILD_MEMBER_UPDATE).
func (w *World) SetNick(g GuildID, u UserID, nick string) error {
	return w.ChangeNick("", g, u, nick)
}

// ChangeNick sets member u's nickname in g as REST caller by asks ("" clears it;
// GUILD_MEMBER_UPDATE when it changes), checked as checkNickLocked says. by "" is the world's
// own scripting, which needs no permission.
func (w *World) ChangeNick(by UserID, g GuildID, u UserID, nick string) error {
	_, err := w.ModifyMember(by, g, u, MemberEdit{Nick: &nick}, "")
	return err
}

// errOwnerNick is the refusal of a change to the guild owner's nickname by anyone else.
var errOwnerNick = errors.New("the owner's nickname is theirs alone")

// checkNickLocked checks that by may set u's nickname in gd to nick, as Discord does:
//   - at most MaxNick characters, else 400 50035;
//   - one's own nickname (Modify Current Member; by == u) needs Change Nickname, or Manage
//     Nicknames, which covers it;
//   - another member's needs Manage Nicknames and by's highest role above u's highest role
//     (the permission hierarchy; Administrator grants the permission, not the rank), and the
//     owner's is nobody else's to change;
//
// all else 403 50013 Missing Permissions. The owner may change anyone's, and by "" (the
// world's scripting) needs nothing. w.mu must be held.
// https://discord.com/developers/docs/topics/permissions#permission-hierarchy
func (w *World) checkNickLocked(by UserID, gd *guild, u UserID, nick string) error {
	if n := utf8.RuneCountInString(nick); n > MaxNick && by == "" {
		return fmt.Errorf("set nick: nick %q: at most %d characters", nick, MaxNick)
	} else if n > MaxNick {
		return invalidBody("nick", fmt.Sprintf("Must be %d or fewer in length.", MaxNick))
	}
	if by == "" || by == gd.owner {
		return nil
	}
	v := &View{st: &w.st}
	perms := v.MemberPermissions(gd.id, by)
	if by == u {
		if perms&(PermChangeNickname|PermManageNicknames|PermAdministrator) == 0 {
			return fmt.Errorf("set nick: %s lacks Change Nickname: %w", by, ErrMissingPermissions)
		}
		return nil
	}
	switch {
	case perms&(PermManageNicknames|PermAdministrator) == 0:
		return fmt.Errorf("set nick: %s lacks Manage Nicknames: %w", by, ErrMissingPermissions)
	case u == gd.owner:
		return fmt.Errorf("set nick: %s for %s: %w: %w", by, u, errOwnerNick, ErrMissingPermissions)
	}
	if top, target := topRoleLocked(gd, by), topRoleLocked(gd, u); !roleAbove(top, target) {
		return fmt.Errorf("set nick: %s's highest role %s is not above %s's %s: %w", by, top.ID, u, target.ID, ErrMissingPermissions)
	}
	return nil
}
