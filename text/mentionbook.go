package text

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// nameBookSize bounds the names a nameBook keeps: about this many, and never more than twice.
const nameBookSize = 20000

// nameBook remembers the names of users seen in messages (their authors and the users they
// mention, as Discord lists them in mentions), by guild, so that a mention of someone who has
// not spoken in the conversation shown reads as a name. The session's state knows few members
// (GUILD_CREATE lists only the bot and the members in voice without the presences intent); a
// message's mentions carry the users it mentions anyway. A name is *sure* when it is the one the
// guild shows (a live message's author, with the member's nickname; a member fetched over REST)
// and not sure when it may lack a nickname (a mention: discordgo keeps no member of a mention;
// the author of a message read back over REST). It is held in memory only, bounded (the older
// of two generations is dropped when the newer fills), and forgets a member who runs forget-me.
type nameBook struct {
	mu       sync.Mutex
	cur, old map[nameKey]bookName
}

type nameKey struct{ guild, user string }

// bookName is one entry: name "" and sure means Discord said there is no such member.
type bookName struct {
	name string
	sure bool
}

func newNameBook() *nameBook {
	return &nameBook{cur: map[nameKey]bookName{}, old: map[nameKey]bookName{}}
}

// learn records the names m, a message of guild, shows: its author's (with the member's
// nickname when the message carries the member) and those of the users it mentions (global
// name, else username).
func (b *nameBook) learn(guild string, m *discordgo.Message) {
	if m == nil || guild == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if m.Author != nil && m.Author.ID != "" {
		b.putLocked(nameKey{guild, m.Author.ID}, bookName{displayName(m), m.Member != nil})
	}
	for _, u := range m.Mentions {
		if u == nil || u.ID == "" {
			continue
		}
		b.putLocked(nameKey{guild, u.ID}, bookName{name: userName(u)})
	}
}

// putLocked records n for k; a name that is not sure does not replace a sure one.
func (b *nameBook) putLocked(k nameKey, n bookName) {
	if n.name == "" && !n.sure {
		return
	}
	if had, ok := b.getLocked(k); ok && had.sure && !n.sure {
		return
	}
	if _, ok := b.cur[k]; !ok && len(b.cur) >= nameBookSize {
		b.old, b.cur = b.cur, map[nameKey]bookName{}
	}
	b.cur[k] = n
}

func (b *nameBook) getLocked(k nameKey) (bookName, bool) {
	if n, ok := b.cur[k]; ok {
		return n, true
	}
	n, ok := b.old[k]
	return n, ok
}

// name is the name last seen for user in guild, or "".
func (b *nameBook) name(guild, user string) string {
	n, _ := b.lookup(guild, user)
	return n.name
}

// lookup is what the book holds of user in guild, and whether it holds anything.
func (b *nameBook) lookup(guild, user string) (bookName, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.getLocked(nameKey{guild, user})
}

// put records the name Discord gave for user in guild (sure), or, with name "", that Discord
// knows no such member (so that they are not asked for again while the book holds it).
func (b *nameBook) put(guild, user, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.putLocked(nameKey{guild, user}, bookName{name, true})
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
func (s *Service) resolveMentions(ctx context.Context, c *convo, limit int, self string, selfRoles []string) {
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
	fetches := mentionFetches
	for _, id := range refs.users {
		if _, ok := n.users[id]; ok || id == self {
			continue
		}
		if name, spoke := authors[id]; spoke { // left out of the participants by their cap
			n.users[id] = name
			continue
		}
		if len(c.mentioned) >= limit {
			continue
		}
		name := s.userName(ctx, st, guild, id, &fetches)
		if name == "" {
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
func (s *Service) classifierNames(ctx context.Context, guild, botName string, contents []string) mentionNames {
	refs := referencedIDs(contents...)
	n := mentionNames{users: map[string]string{}, roles: map[string]string{}, channels: map[string]string{}}
	st := s.state.Load()
	self := s.selfID()
	fetches := mentionFetches
	for _, id := range refs.users {
		name := botName
		if id != self {
			name = s.userName(ctx, st, guild, id, &fetches)
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

// mentionFetches bounds the members one prompt asks Discord about (userName), so that a message
// mentioning many unknown ids costs a bounded wait; mentionFetchTimeout bounds each request.
const (
	mentionFetches      = 5
	mentionFetchTimeout = 3 * time.Second
)

// userName is the name people see of a mentioned user of guild: the member's nickname in the
// session's state, else the name last seen for them in the guild (nameBook), else, while
// *fetches lasts, the member as Discord's REST API returns it (GET /guilds/{guild}/members/{user},
// which needs no privileged intent), kept in the book: after a restart the state holds no
// members without the members intent and the book is empty, and a mention of someone who has
// not spoken since would read as <@id>. Discord's 404 (no such member: they left) is kept too,
// so they are not asked for again; other failures are logged at debug and leave "".
func (s *Service) userName(ctx context.Context, st *discordgo.State, guild, user string, fetches *int) string {
	if name := memberName(st, guild, user); name != "" {
		return name
	}
	had, known := s.names.lookup(guild, user)
	if (known && had.sure) || guild == "" || *fetches <= 0 {
		return had.name
	}
	*fetches--
	ctx, cancel := context.WithTimeout(ctx, mentionFetchTimeout)
	defer cancel()
	m, err := s.opts.Discord.GuildMember(guild, user, discordgo.WithContext(ctx))
	if err != nil {
		var re *discordgo.RESTError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusNotFound {
			s.names.put(guild, user, "")
			s.logger.Debug("mention_member_unknown", "guild_id", guild, "user_id", user)
			return ""
		}
		s.logger.Debug("mention_member_fetch_failed", "guild_id", guild, "user_id", user, "error", err.Error())
		return had.name
	}
	name := ""
	if m != nil {
		name = m.Nick
		if name == "" && m.User != nil {
			name = userName(m.User)
		}
	}
	s.names.put(guild, user, name)
	return name
}
