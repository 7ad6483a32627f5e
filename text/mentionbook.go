package text

import (
	"slices"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"
)

// nameBookSize bounds the names a nameBook keeps: about this many, and never more than twice.
const nameBookSize = 20000

// nameBook remembers the names of users seen in messages (their authors and the users they
// mention, as Discord lists them in mentions), by guild, so that a mention of someone who has
// not spoken in the conversation shown reads as a name. The session's state knows members only
// with the privileged members intent; a message's mentions carry the users it mentions anyway.
// It is held in memory only, bounded (the older of two generations is dropped when the newer
// fills), and forgets a member who runs forget-me.
type nameBook struct {
	mu       sync.Mutex
	cur, old map[nameKey]string
}

type nameKey struct{ guild, user string }

func newNameBook() *nameBook {
	return &nameBook{cur: map[nameKey]string{}, old: map[nameKey]string{}}
}

// learn records the names m, a message of guild, shows: its author's (with the member's
// nickname) and those of the users it mentions (discordgo keeps no member of a mention: global
// name, else username).
func (b *nameBook) learn(guild string, m *discordgo.Message) {
	if m == nil || guild == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if m.Author != nil && m.Author.ID != "" {
		b.putLocked(nameKey{guild, m.Author.ID}, displayName(m))
	}
	for _, u := range m.Mentions {
		if u == nil || u.ID == "" {
			continue
		}
		k := nameKey{guild, u.ID}
		if _, known := b.cur[k]; known && m.Author != nil && u.ID == m.Author.ID {
			continue // the author's nickname, just recorded, is better
		}
		b.putLocked(k, userName(u))
	}
}

func (b *nameBook) putLocked(k nameKey, name string) {
	if name == "" {
		return
	}
	if _, ok := b.cur[k]; !ok && len(b.cur) >= nameBookSize {
		b.old, b.cur = b.cur, map[nameKey]string{}
	}
	b.cur[k] = name
}

// name is the name last seen for user in guild, or "".
func (b *nameBook) name(guild, user string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := nameKey{guild, user}
	if n, ok := b.cur[k]; ok {
		return n
	}
	return b.old[k]
}

// forget drops what the book holds of user in guild.
func (b *nameBook) forget(guild, user string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := nameKey{guild, user}
	delete(b.cur, k)
	delete(b.old, k)
}

// userName is the name people see of u outside any server: global name, else username.
func userName(u *discordgo.User) string {
	if u.GlobalName != "" {
		return u.GlobalName
	}
	return u.Username
}

// mentionRefs are the ids a text's mention markup names, each once, in order of appearance.
type mentionRefs struct {
	users, roles, channels []string
}

// referencedIDs collects the user, role and channel ids the contents mention (<@ID>, <@!ID>,
// <@&ID>, <#ID>).
func referencedIDs(contents ...string) mentionRefs {
	var r mentionRefs
	for _, content := range contents {
		for rest := content; ; {
			i := strings.Index(rest, "<")
			if i < 0 {
				break
			}
			rest = rest[i+1:]
			end := strings.IndexAny(rest, "<>")
			if end < 0 || rest[end] == '<' {
				continue
			}
			inner := rest[:end]
			switch {
			case strings.HasPrefix(inner, "@&"):
				r.roles = addID(r.roles, inner[2:])
			case strings.HasPrefix(inner, "@"):
				r.users = addID(r.users, strings.TrimPrefix(inner[1:], "!"))
			case strings.HasPrefix(inner, "#"):
				r.channels = addID(r.channels, inner[1:])
			}
		}
	}
	return r
}

func addID(ids []string, id string) []string {
	if !isSnowflake(id) || slices.Contains(ids, id) {
		return ids
	}
	return append(ids, id)
}

// resolveMentions names the ids the shown messages (and the topic) mention, as the model will
// read them, and lists the mentioned users who have not spoken in it (c.mentioned, at most
// limit): participants by the name they are listed under, people the participants' cap left
// out by the name their lines carry; other users by their nickname in the session's state,
// else the name the book last saw; roles and channels by the state's names (a channel the
// pipeline looked up before by its cached name). The bot's own mention and its own roles are
// left as written (self). An id nothing names stays as Discord wrote it.
func (s *Service) resolveMentions(c *convo, limit int, self string, selfRoles []string) {
	contents := []string{c.topic}
	authors := map[string]string{} // the people who wrote a line shown, by the name it carries
	for _, m := range c.all() {
		contents = append(contents, m.Content)
		authors[m.AuthorID] = m.AuthorName
	}
	refs := referencedIDs(contents...)
	n := mentionNames{users: map[string]string{}, roles: map[string]string{}, channels: map[string]string{}, self: self, selfRoles: selfRoles}
	for _, p := range c.people {
		n.users[p.id] = p.name
	}
	guild := c.primary.GuildID
	st := s.state.Load()
	for _, id := range refs.users {
		if _, ok := n.users[id]; ok || id == self {
			continue
		}
		if name, spoke := authors[id]; spoke { // left out of the participants by their cap
			n.users[id] = name
			continue
		}
		name := memberName(st, guild, id)
		if name == "" {
			name = s.names.name(guild, id)
		}
		if name == "" || len(c.mentioned) >= limit {
			continue
		}
		n.users[id] = name
		c.mentioned = append(c.mentioned, participant{id: id, name: cleanName(name)})
	}
	for _, id := range refs.roles {
		if name := roleName(st, guild, id); name != "" {
			n.roles[id] = name
		}
	}
	for _, id := range refs.channels {
		if name := s.channelName(st, id); name != "" {
			n.channels[id] = name
		}
	}
	c.names = n
}

// memberName is the name the state knows of a guild member: nickname, global name, username.
func memberName(st *discordgo.State, guild, user string) string {
	if st == nil || guild == "" {
		return ""
	}
	m, err := st.Member(guild, user)
	if err != nil || m == nil {
		return ""
	}
	st.RLock()
	defer st.RUnlock()
	if m.Nick != "" {
		return m.Nick
	}
	if m.User != nil {
		return userName(m.User)
	}
	return ""
}

// roleName is the name of a guild's role in the state, or "".
func roleName(st *discordgo.State, guild, id string) string {
	if st == nil || guild == "" {
		return ""
	}
	r, err := st.Role(guild, id)
	if err != nil || r == nil {
		return ""
	}
	st.RLock()
	defer st.RUnlock()
	return r.Name
}

// channelName is a channel's name in the state, else the name the pipeline cached when it
// looked the channel up (it asks Discord for no other channel here), or "".
func (s *Service) channelName(st *discordgo.State, id string) string {
	if st != nil {
		if ch, err := st.Channel(id); err == nil && ch != nil {
			st.RLock()
			defer st.RUnlock()
			return ch.Name
		}
	}
	s.mu.Lock()
	cs := s.channels[id]
	s.mu.Unlock()
	if cs == nil {
		return ""
	}
	info, _ := cs.cachedInfo()
	return info.name
}

// classifierNames are the names the direct-address classifier reads in place of the mention
// markup of contents (the message judged and the lines before it): people, roles and channels
// as resolveMentions names them, and the bot's own mention and its own roles' as @botName,
// since the classifier's prompt knows the assistant by that name and not by an id. An id
// nothing names stays as Discord wrote it.
func (s *Service) classifierNames(guild, botName string, contents []string) mentionNames {
	refs := referencedIDs(contents...)
	n := mentionNames{users: map[string]string{}, roles: map[string]string{}, channels: map[string]string{}}
	st := s.state.Load()
	self := s.selfID()
	for _, id := range refs.users {
		name := botName
		if id != self {
			if name = memberName(st, guild, id); name == "" {
				name = s.names.name(guild, id)
			}
		}
		if name != "" {
			n.users[id] = name
		}
	}
	own := s.ownRoles(guild)
	for _, id := range refs.roles {
		if slices.Contains(own, id) {
			n.roles[id] = botName
		} else if name := roleName(st, guild, id); name != "" {
			n.roles[id] = name
		}
	}
	for _, id := range refs.channels {
		if name := s.channelName(st, id); name != "" {
			n.channels[id] = name
		}
	}
	return n
}
