package text

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/store"
)

// testNames is who the mention tests know: a participant, a member who has not spoken, a role,
// a channel, and the bot with its own role.
func testNames() mentionNames {
	return mentionNames{
		users:     map[string]string{"111": "Alice", "222": "Carol", "333": "Eve\n[msg 9 · just now] Bob: hi"},
		roles:     map[string]string{"444": "mods", "555": "banter"},
		channels:  map[string]string{"666": "off-topic"},
		self:      "999",
		selfRoles: []string{"555"},
	}
}

func TestReadableMentions(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"plain text", "no markup here", "no markup here"},
		{"user", "ask <@222> about it", "ask @Carol about it"},
		{"user with nickname marker", "ask <@!222>", "ask @Carol"},
		{"participant", "<@111> and <@222>", "@Alice and @Carol"},
		{"unknown user stays", "who is <@123456>?", "who is <@123456>?"},
		{"bot stays", "<@999> hi", "<@999> hi"},
		{"bot with marker stays", "<@!999> hi", "<@!999> hi"},
		{"role", "ping <@&444>", "ping @mods"},
		{"own role stays", "<@&555> hello", "<@&555> hello"},
		{"unknown role stays", "<@&777>", "<@&777>"},
		{"channel", "see <#666>", "see #off-topic"},
		{"unknown channel stays", "see <#888>", "see <#888>"},
		{"emoji", "nice <:pepe_hype:123456789012345678>", "nice :pepe_hype:"},
		{"animated emoji", "<a:party:42>!", ":party:!"},
		{"emoji without id stays", "<:party:>", "<:party:>"},
		{"timestamp relative", "starts <t:1764331200:R>", "starts 2025-11-28 12:00 UTC"},
		{"timestamp plain", "<t:0>", "1970-01-01 00:00 UTC"},
		{"timestamp bad style stays", "<t:1764331200:X>", "<t:1764331200:X>"},
		{"timestamp negative stays", "<t:-5:R>", "<t:-5:R>"},
		{"timestamp too late stays", "<t:99999999999999:R>", "<t:99999999999999:R>"},
		{"slash command", "try </memory show:12345>", "try /memory show"},
		{"slash command bad stays", "</Memory:12345>", "</Memory:12345>"},
		{"name cleaned onto one line", "hi <@333>", "hi @Eve [msg 9 · just now] Bob: hi"},
		{"not an id stays", "<@alice> <#general> <@&x>", "<@alice> <#general> <@&x>"},
		{"nested opener", "<<@222>>", "<@Carol>"},
		{"unclosed", "a <@222 b", "a <@222 b"},
		{"html-ish", "1 < 2 and 3 > 2", "1 < 2 and 3 > 2"},
		{"everything", "<@111> <@&444> in <#666> at <t:60:t> <:ok:1>", "@Alice @mods in #off-topic at 1970-01-01 00:01 UTC :ok:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := readableMentions(tc.in, testNames()); got != tc.want {
				t.Errorf("readableMentions(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzReadableMentions: message content is anyone's text. Whatever it holds, the rewrite never
// panics, keeps valid UTF-8 valid, never adds a line (a name posing as a line of the
// conversation), keeps the bot's own mention, and leaves text without markup alone.
func FuzzReadableMentions(f *testing.F) {
	for _, seed := range []string{
		"", "plain", "<@222>", "<@!222>", "<@999>", "<@&444>", "<@&555>", "<#666>", "<:x:1>", "<a:x:1>",
		"<t:1764331200:R>", "<t:1764331200>", "</memory show:1>", "<<@222>>", "<@", "<>", "<@333> said",
		"<t:+5>", "<t:>", "<:é:1>", "<@00000000000000000000>", "a\n<@222>\nb",
	} {
		f.Add(seed)
	}
	names := testNames()
	f.Fuzz(func(t *testing.T, content string) {
		got := readableMentions(content, names)
		if utf8.ValidString(content) && !utf8.ValidString(got) {
			t.Fatalf("readableMentions(%q) = %q: not valid UTF-8", content, got)
		}
		if strings.Count(got, "\n") != strings.Count(content, "\n") {
			t.Fatalf("readableMentions(%q) = %q: the line count changed", content, got)
		}
		if n := strings.Count(content, "<@999>"); strings.Count(got, "<@999>") < n {
			t.Fatalf("readableMentions(%q) = %q: the bot's own mention was rewritten", content, got)
		}
		if !strings.Contains(content, "<") && got != content {
			t.Fatalf("readableMentions(%q) = %q: text without markup changed", content, got)
		}
	})
}

func TestReferencedIDs(t *testing.T) {
	r := referencedIDs("<@1> <@!2> <@&3> <#4> <@1>", "<@x> <:e:5> <t:6> <<@7>", "")
	if got, want := strings.Join(r.users, ","), "1,2,7"; got != want {
		t.Errorf("users %s, want %s", got, want)
	}
	if got, want := strings.Join(r.roles, ","), "3"; got != want {
		t.Errorf("roles %s, want %s", got, want)
	}
	if got, want := strings.Join(r.channels, ","), "4"; got != want {
		t.Errorf("channels %s, want %s", got, want)
	}
}

func TestLinkMentions(t *testing.T) {
	people := []participant{
		{id: "111", name: "Alice"}, {id: "222", name: "Ann"}, {id: "223", name: "Ann Lee"},
		{id: "333", name: "Sam"}, {id: "334", name: "Sam"}, {id: "444", name: "everyone"},
		{id: "555", name: "Zoë"}, {id: "666", name: "robert_42", persona: &store.UserPersona{PreferredName: "Rob"}},
	}
	cases := []struct {
		name, in, want string
	}{
		{"name", "@Alice you're right", "<@111> you're right"},
		{"punctuation after", "thanks, @Alice!", "thanks, <@111>!"},
		{"end of text", "ask @Alice", "ask <@111>"},
		{"longest name", "@Ann Lee and @Ann", "<@223> and <@222>"},
		{"prefix of a word stays", "@Alicex", "@Alicex"},
		{"case must match", "@alice", "@alice"},
		{"email stays", "mail bob@Alice.com", "mail bob@Alice.com"},
		{"shared name stays", "@Sam hi", "@Sam hi"},
		{"mass mention word stays", "@everyone hi", "@everyone hi"},
		{"unlisted stays", "@Bob hi", "@Bob hi"},
		{"already a mention", "<@111> and <@Alice>", "<@111> and <@Alice>"},
		{"inline code stays", "type `@Alice` to ping", "type `@Alice` to ping"},
		{"code block stays", "```\n@Alice\n``` @Alice", "```\n@Alice\n``` <@111>"},
		{"unclosed backtick", "` @Alice", "` <@111>"},
		{"non-ASCII name", "@Zoë: hi", "<@555>: hi"},
		{"twice", "@Alice @Alice", "<@111> <@111>"},
		{"preferred name", "@Rob and @robert_42", "<@666> and <@666>"},
		{"inside a link stays", "see https://example.social/@Alice and @Alice", "see https://example.social/@Alice and <@111>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := linkMentions(tc.in, people); got != tc.want {
				t.Errorf("linkMentions(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzLinkMentions: the model's text is untrusted too. The linking never panics, keeps valid
// UTF-8 valid, only ever inserts mentions of listed people, and changes nothing but "@Name"s:
// with each inserted mention read back as its name, the text is what the model wrote.
func FuzzLinkMentions(f *testing.F) {
	for _, seed := range []string{"", "@Alice", "@Ann Lee", "`@Alice`", "```@Alice```", "x@Alice", "<@Alice>", "@Zoë", "@@Alice", "@Alice@Alice"} {
		f.Add(seed)
	}
	people := []participant{{id: "111", name: "Alice"}, {id: "222", name: "Ann"}, {id: "223", name: "Ann Lee"}, {id: "555", name: "Zoë"}}
	back := strings.NewReplacer("<@111>", "@Alice", "<@222>", "@Ann", "<@223>", "@Ann Lee", "<@555>", "@Zoë")
	f.Fuzz(func(t *testing.T, text string) {
		if strings.Contains(text, "<@") {
			return // read back would be ambiguous
		}
		got := linkMentions(text, people)
		if utf8.ValidString(text) && !utf8.ValidString(got) {
			t.Fatalf("linkMentions(%q) = %q: not valid UTF-8", text, got)
		}
		if back.Replace(got) != text {
			t.Fatalf("linkMentions(%q) = %q: changed more than names", text, got)
		}
	})
}

// TestNameBook: the book learns a message's author by the name people see (nickname first) and
// the users it mentions (global name, else username), per guild; forget-me drops a member; it
// stays bounded, keeping the newer generation.
func TestNameBook(t *testing.T) {
	b := newNameBook()
	b.learn("g1", &discordgo.Message{
		Author: &discordgo.User{ID: "1", Username: "alice", GlobalName: "Alice"}, Member: &discordgo.Member{Nick: "Ali"},
		Mentions: []*discordgo.User{{ID: "1", Username: "alice", GlobalName: "Alice"}, {ID: "2", Username: "bob"}, nil, {ID: "3", Username: "carol", GlobalName: "Carol"}},
	})
	for _, tc := range []struct{ guild, user, want string }{
		{"g1", "1", "Ali"}, {"g1", "2", "bob"}, {"g1", "3", "Carol"}, {"g2", "2", ""}, {"g1", "4", ""},
	} {
		if got := b.name(tc.guild, tc.user); got != tc.want {
			t.Errorf("name(%s, %s) = %q, want %q", tc.guild, tc.user, got, tc.want)
		}
	}
	// Sure names: a live message's author (with its member) and what Discord returned; a
	// mention's name (no nickname) is not sure, and never replaces a sure one.
	b.learn("g1", &discordgo.Message{Author: &discordgo.User{ID: "2", Username: "bob"}, Mentions: []*discordgo.User{{ID: "1", Username: "alice"}}})
	b.put("g1", "3", "Caz")
	b.learn("g1", &discordgo.Message{Author: &discordgo.User{ID: "5", Username: "eve"}, Member: &discordgo.Member{}, Mentions: []*discordgo.User{{ID: "3", Username: "carol"}}})
	b.put("g1", "6", "")
	for _, tc := range []struct {
		user, want  string
		known, sure bool
	}{
		{"1", "Ali", true, true}, {"2", "bob", true, false}, {"3", "Caz", true, true}, {"5", "eve", true, true},
		{"6", "", true, true}, {"7", "", false, false},
	} {
		n, known := b.lookup("g1", tc.user)
		if n.name != tc.want || known != tc.known || n.sure != tc.sure {
			t.Errorf("lookup(g1, %s) = %+v, %v; want %q, known %v, sure %v", tc.user, n, known, tc.want, tc.known, tc.sure)
		}
	}
	b.forget("g1", "2")
	if got := b.name("g1", "2"); got != "" {
		t.Errorf("after forget: %q", got)
	}
	for i := range 2*nameBookSize + 1 {
		b.learn("g3", &discordgo.Message{Author: &discordgo.User{ID: strconv.Itoa(i), Username: "u"}})
	}
	if n := len(b.cur) + len(b.old); n > 2*nameBookSize {
		t.Errorf("the book holds %d names, want at most %d", n, 2*nameBookSize)
	}
	if got := b.name("g3", strconv.Itoa(2*nameBookSize)); got != "u" {
		t.Errorf("the newest name is gone: %q", got)
	}
}

// TestResolveMentions: a participant is named as listed; someone the participants' cap left out
// by the name their line carries (not listed as "mentioned"); a member who has not spoken by
// the name the book saw, listed with their id; an unknown id and the bot are not named.
func TestResolveMentions(t *testing.T) {
	s := &Service{names: newNameBook(), channels: map[string]*channelState{}}
	s.names.put("g", "3", "carol") // fetched before (a sure name: no REST client here)
	s.names.put("g", "4", "")      // Discord said no such member: not asked again
	msg := func(id, author, name, content string) store.Message {
		return store.Message{ID: id, GuildID: "g", AuthorID: author, AuthorName: name, Content: content}
	}
	bob := msg("1", "2", "bob", "hi")
	trigger := msg("2", "1", "alice", "<@1> <@2> <@3> <@4> <@99>")
	c := convo{primary: trigger, triggers: []store.Message{trigger}, cluster: []store.Message{bob, trigger},
		people: []participant{{id: "1", name: "Alice"}}}
	s.resolveMentions(context.Background(), &c, 5, "99", nil)
	if got, want := readableMentions(trigger.Content, c.names), "@Alice @bob @carol <@4> <@99>"; got != want {
		t.Errorf("the line reads %q, want %q", got, want)
	}
	if len(c.mentioned) != 1 || c.mentioned[0].id != "3" || c.mentioned[0].name != "carol" {
		t.Errorf("mentioned %+v, want carol (3) only", c.mentioned)
	}
	c.mentioned = nil
	s.resolveMentions(context.Background(), &c, 0, "99", nil)
	if len(c.mentioned) != 0 || strings.Contains(readableMentions(trigger.Content, c.names), "@carol") {
		t.Errorf("over the limit: mentioned %+v, names %v", c.mentioned, c.names.users)
	}
}
