package text_test

import (
	"strings"
	"testing"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestMentionsReadAsNames: a line mentioning a member who has not spoken, a role and a channel
// reaches the model with their names, as a person sees them in the client, not as Discord's
// markup: the member by nickname when the session's state knows the member (GUILD_CREATE), by
// the name the message's mentions carry when it does not (a member who joined later), the role
// and the channel by the state's names. The mentioned members are listed with their ids; an id
// nothing names, and the bot's own mention, stay as written.
func TestMentionsReadAsNames(t *testing.T) {
	h := newHarness(t, nil, toolReply("", "reply", "", "ok"))
	carol := h.dsim.CreateUser("carol")
	if err := h.dsim.AddMember(h.guild, carol); err != nil {
		t.Fatal(err)
	}
	if err := h.dsim.SetNick(h.guild, carol, "Caz"); err != nil {
		t.Fatal(err)
	}
	mods, err := h.dsim.CreateRole(h.guild, "mods")
	if err != nil {
		t.Fatal(err)
	}
	offTopic := h.dsim.CreateTextChannel(h.guild, "off-topic")
	h.restart() // the state learns members, roles and channels from GUILD_CREATE

	dave := h.dsim.CreateUser("dave") // joins after GUILD_CREATE: not in the state
	if err := h.dsim.AddMember(h.guild, dave); err != nil {
		t.Fatal(err)
	}
	m := h.post(h.alice, mention(h.dsim.BotID())+" should "+mention(carol)+" and "+mention(dave)+
		" ask "+discordsim.MentionRole(mods)+" in <#"+string(offTopic)+">? not <@123456789>")
	h.waitBot(1)

	prompt := h.lastGeneration().Prompt
	want := "[msg " + string(m.ID)
	line := ""
	for _, l := range strings.Split(prompt, "\n") {
		if strings.HasPrefix(l, want) {
			line = l
		}
	}
	if wantLine := "alice: " + mention(h.dsim.BotID()) + " should @Caz and @dave ask @mods in #off-topic? not <@123456789>"; !strings.HasSuffix(line, wantLine) {
		t.Errorf("the line reads %q, want it to end %q; prompt:\n%s", line, wantLine, prompt)
	}
	for _, listed := range []string{
		"- Caz (user id " + string(carol) + "): mentioned in the conversation, not one of the people talking",
		"- dave (user id " + string(dave) + "): mentioned in the conversation, not one of the people talking",
	} {
		if !strings.Contains(prompt, listed) {
			t.Errorf("the prompt does not list %q:\n%s", listed, prompt)
		}
	}
}

// TestModelAtNameBecomesMention: the model writes "@Name" of a person listed in its prompt, as
// the lines show mentions; Discord receives their mention, <@ID>, so that the name links to
// them, with allowed_mentions as the config says: nothing parsed, only the replied-to author
// pinged, and only with permissions.pingRepliedUser. A name not listed stays plain text.
func TestModelAtNameBecomesMention(t *testing.T) {
	for _, ping := range []bool{true, false} {
		t.Run(map[bool]string{true: "pingRepliedUser", false: "no pings"}[ping], func(t *testing.T) {
			h := newHarness(t, func(c *config.Config) { c.Permissions.PingRepliedUser = ping },
				toolReply("who won", "reply", "", "@bob won, @alice, ask @Zed"))
			h.post(h.bob, "I won the quiz")
			m := h.post(h.alice, "banter, who won the quiz?")
			r := h.waitBot(1)

			if want := mention(h.bob) + " won, " + mention(h.alice) + ", ask @Zed"; r.Content != want {
				t.Errorf("the reply reached Discord as %q, want %q", r.Content, want)
			}
			if r.ReplyTo() != m.ID {
				t.Errorf("reply references %q, want %q", r.ReplyTo(), m.ID)
			}
			am := r.AllowedMentions
			if am == nil || len(am.Parse) != 0 || len(am.Users) != 0 || len(am.Roles) != 0 || am.RepliedUser != ping {
				t.Fatalf("allowed_mentions %+v, want parse [] with no users or roles and replied_user %v", am, ping)
			}
			if r.MentionsUser(h.bob) {
				t.Error("bob was pinged: only the replied-to author may be")
			}
			if r.MentionsUser(h.alice) != ping {
				t.Errorf("alice pinged: %v, want %v (pingRepliedUser)", r.MentionsUser(h.alice), ping)
			}
		})
	}
}

// TestClassifierReadsMentionsAsNames: the direct-address classifier reads mentions as people
// see them in the client. "<@alice> can you check the oven" before the judged message reads
// "@alice can you check the oven" (aimed at Alice, which the model cannot tell from an id), and
// a message that mentions the bot without addressing it ("why is @banter so slow") shows the
// mention as the name the classifier's prompt knows the assistant by, and says so. Before, the
// judged message kept "<@ID>" and the prompt said the name appeared as "".
func TestClassifierReadsMentionsAsNames(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.LLM.DirectAddressClassifier.Enabled = true
		c.LLM.DirectAddressClassifier.Model = "gpt-5-nano"
	}, openaisim.Rule{Match: openaisim.Match{Model: "gpt-5-nano"}, Reply: openaisim.Reply{Text: "0.1"}})
	h.post(h.bob, mention(h.alice)+" can you check the oven in <#"+string(h.general)+">?")
	m := h.post(h.alice, "why is "+mention(h.dsim.BotID())+" so slow today")
	h.waitLog(`"msg":"reply_admission"`, string(m.ID), `"reason":"llm_no"`)

	var prompt string
	for _, rq := range h.osim.Requests() {
		if rq.Model == "gpt-5-nano" {
			prompt = rq.Prompt
		}
	}
	for _, want := range []string{
		"[bob] @alice can you check the oven in #general?",
		"from alice:\nwhy is @banter so slow today\n",
		`The name appears as "@banter".`,
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the classifier's prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, "<@") || strings.Contains(prompt, "<#") {
		t.Errorf("the classifier's prompt holds mention markup:\n%s", prompt)
	}
}

// TestMentionNamesFetched: the session's state does not list members who are in no voice channel
// (GUILD_CREATE without the presences intent), and a mention's user carries no nickname, so a
// member mentioned who has not spoken is asked of Discord (GET /guilds/{guild}/members/{user})
// once and read by their nickname from then on; a mentioned id Discord does not know as a member
// is asked once and stays as written.
func TestMentionNamesFetched(t *testing.T) {
	h := newHarness(t, nil, toolReply("", "reply", "", "ok"))
	carol := h.dsim.CreateUser("carol")
	if err := h.dsim.AddMember(h.guild, carol); err != nil {
		t.Fatal(err)
	}
	if err := h.dsim.SetNick(h.guild, carol, "Caz"); err != nil {
		t.Fatal(err)
	}
	h.restart()                               // a new process: nothing seen of carol but GUILD_CREATE, which does not list her
	stranger := h.dsim.CreateUser("stranger") // not a member of the guild

	memberFetches := func(user discordsim.UserID) int {
		n := 0
		for _, r := range h.dsim.RESTLog() {
			if r.Method == "GET" && strings.HasSuffix(r.Path, "/members/"+string(user)) {
				n++
			}
		}
		return n
	}
	for i := range 2 {
		m := h.post(h.alice, "banter, is "+mention(carol)+" around? or "+mention(stranger)+"?")
		h.waitBot(i + 1)
		prompt := h.lastGeneration().Prompt
		if want := "alice: banter, is @Caz around? or " + mention(stranger) + "?"; !strings.Contains(prompt, want) {
			t.Errorf("message %d (%s) does not read %q:\n%s", i+1, m.ID, want, prompt)
		}
	}
	if n := memberFetches(carol); n != 1 {
		t.Errorf("carol's member fetched %d times, want once", n)
	}
	if n := memberFetches(stranger); n != 1 {
		t.Errorf("the stranger's member fetched %d times, want once (Discord's 404 kept)", n)
	}
}
