package text

import (
	"fmt"
	"strings"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
)

// toolInstructions explain the send_discord_message tool to the model.
const toolInstructions = `You are in a Discord server, in a group conversation. Every line of the conversation is
labelled with its message id, its age and who wrote it; lines marked "(you)" are yours.
To answer, call send_discord_message with:
- mode "reply" and target_message_id set to the id of the message you are answering, or
- mode "broadcast" and target_message_id null to post to the channel.
Put only your message in text: no labels, ids or names of your own in front. Keep it short
and natural, like a person in chat. Never use @everyone or @here.
Mentions in the lines read as people see them: @Name for a person or a role, #name for a
channel. To mention someone, write @ and their name exactly as listed under Participants.`

// buildRequest renders the model request for a conversation.
func buildRequest(cfg *config.Config, c *convo, d decision.Decision, now time.Time, self participant) llm.GenerateRequest {
	persona := cfg.Bot.Personas[c.persona]
	var sys strings.Builder
	sys.WriteString(strings.TrimSpace(persona.Prompt))
	sys.WriteString("\n\nYour name is ")
	sys.WriteString(cfg.Bot.Name)
	if len(cfg.Bot.Aliases) > 0 {
		sys.WriteString(" (also called ")
		sys.WriteString(strings.Join(cfg.Bot.Aliases, ", "))
		sys.WriteString(")")
	}
	sys.WriteString(".")
	if self.nick != "" {
		fmt.Fprintf(&sys, " In this server you are called %q: people may address you by that name.", self.nick)
	}
	sys.WriteString("\n\n")
	sys.WriteString(toolInstructions)
	sys.WriteString("\n\n")
	sys.WriteString(constraints(cfg, c, now))
	sys.WriteString("\n\n")
	sys.WriteString(decision.Guidance(d, c.nameOf(c.primary)))
	for _, note := range situationNotes(c) {
		sys.WriteString("\n\n")
		sys.WriteString(note)
	}

	msg := llm.Message{Role: llm.RoleUser, Content: renderConvo(cfg, c, now, self)}
	for _, si := range c.images.inputs {
		msg.Images = append(msg.Images, si.input)
	}
	return llm.GenerateRequest{
		Model:        cfg.LLM.Model,
		Instructions: sys.String(),
		Messages:     []llm.Message{msg},
		Tools:        []llm.Tool{sendMessageTool},
	}
}

// constraints are the rules on where a reply may go, stated as the design states them: a
// supplied id or a broadcast, no target older than text.targetMaxAgeMinutes, quiet hours.
func constraints(cfg *config.Config, c *convo, now time.Time) string {
	return "Constraints:\n" +
		"- Reply only to a message id shown in the conversation, or broadcast.\n" +
		fmt.Sprintf("- Avoid targets older than %d minutes: to answer an older message, broadcast instead.\n", cfg.Text.TargetMaxAgeMinutes) +
		quietHoursLine(cfg, c.primary.GuildID, now)
}

// situationNotes are what the instructions say about where the conversation stands: a reply to
// the bot's own line (DirectReply), a Discord thread, several people's questions answered at
// once.
func situationNotes(c *convo) []string {
	var notes []string
	if c.kind == kindDirectReply {
		notes = append(notes, c.nameOf(c.primary)+" is replying directly to something you said (your line just before "+
			"theirs in the reply chain). Build on your earlier line: double down on it, contradict yourself if you "+
			"have changed your mind, escalate the joke or the argument, or refer back to it, rather than starting afresh.")
	}
	if c.channel.isThread {
		notes = append(notes, fmt.Sprintf("This conversation is in a Discord thread (%q, off #%s): keep to the thread's subject; "+
			"the people here chose to talk about it apart from the main channel.", nonEmpty(c.channel.name, c.channel.id),
			nonEmpty(c.channel.parent, c.channel.parentID)))
	}
	if asks := c.askers(); len(asks) > 1 {
		notes = append(notes, "Several people wrote to you at once (listed at the end of the conversation): answer each of "+
			"them, by name, in your one message.")
	}
	return notes
}

// renderConvo writes the context block the model reads. self is the bot: its name (bot.name)
// and Discord user id, listed among the participants so that a mention of it in a line (<@ID>,
// as Discord writes it) reads as one. Other mentions read as names (readableMentions with
// c.names): @Name for people, listed too with their ids (the users mentioned who are not
// talking, c.mentioned, as such), @RoleName, #channel, :emoji:, UTC times.
func renderConvo(cfg *config.Config, c *convo, now time.Time, self participant) string {
	selfName := self.name
	var b strings.Builder
	if c.channel.isThread {
		fmt.Fprintf(&b, "Channel: #%s, thread %q\n", nonEmpty(c.channel.parent, c.channel.parentID), nonEmpty(c.channel.name, c.channel.id))
	} else {
		fmt.Fprintf(&b, "Channel: #%s\n", nonEmpty(c.channel.name, c.channel.id))
	}
	fmt.Fprintf(&b, "Time now: %s\n\n", now.UTC().Format("2006-01-02 15:04 UTC"))

	b.WriteString("Participants:\n")
	for _, p := range c.people {
		fmt.Fprintf(&b, "- %s (user id %s): %s\n", p.name, p.id, p.persona.Summary())
	}
	for _, p := range c.mentioned {
		fmt.Fprintf(&b, "- %s (user id %s): mentioned in the conversation, not one of the people talking\n", p.name, p.id)
	}
	if self.id != "" && len(self.roleIDs) > 0 {
		fmt.Fprintf(&b, "- %s (you, user id %s; a mention of your role, <@&%s>, means you too)\n\n", selfName, self.id, strings.Join(self.roleIDs, ">, <@&"))
	} else if self.id != "" {
		fmt.Fprintf(&b, "- %s (you, user id %s)\n\n", selfName, self.id)
	} else {
		fmt.Fprintf(&b, "- %s (you)\n\n", selfName)
	}
	if c.topic != "" {
		// The design's priority: the topic over the history.
		fmt.Fprintf(&b, "Topic %s asked you about (it matters more than the history below): %s\n\n", c.nameOf(c.primary), readableMentions(c.topic, c.names))
	}

	// Each message is shown once: the anchor, or a reply chain's lines, are not repeated in the
	// recent conversation that follows them.
	printed := map[string]bool{}
	lines := func(header string, ms []store.Message) {
		var todo []store.Message
		for _, m := range ms {
			if !printed[m.ID] {
				printed[m.ID] = true
				todo = append(todo, m)
			}
		}
		if len(todo) == 0 {
			return
		}
		b.WriteString(header)
		for _, m := range todo {
			who := c.nameOf(m)
			if m.IsSelf {
				who = selfName + " (you)"
			}
			fmt.Fprintf(&b, "[msg %s · %s] %s: %s%s\n", m.ID, age(now, m.CreatedAt), who, readableMentions(m.Content, c.names), c.images.label(m.ID, cfg.Images.Enabled))
		}
	}
	switch c.kind {
	case kindDirectReply:
		lines("The conversation you are continuing (a reply chain, oldest first):\n", c.chain)
		lines("\nWhat else was said in the channel around it (oldest first):\n", c.cluster)
	case kindAnchor:
		lines(fmt.Sprintf("%s is replying to this message:\n", c.nameOf(c.primary)), []store.Message{*c.anchor})
		lines("\nRecent conversation in the channel (oldest first):\n", c.cluster)
	default:
		lines("Recent conversation in the channel (oldest first):\n", c.cluster)
	}
	// Messages of the burst not shown above (those after the message answered).
	lines("\nAlso in this burst:\n", c.triggers)
	var ids []string
	for _, t := range c.triggers {
		ids = append(ids, t.ID)
	}
	fmt.Fprintf(&b, "\nMessage to answer: msg %s from %s", c.primary.ID, c.nameOf(c.primary))
	if len(ids) > 1 {
		fmt.Fprintf(&b, " (the burst of messages %s arrived together)", strings.Join(ids, ", "))
	}
	b.WriteString(".\n")
	if asks := c.askers(); len(asks) > 1 {
		b.WriteString("Each person's message in the burst, all to be answered:\n")
		for _, m := range asks {
			fmt.Fprintf(&b, "- %s (msg %s): %s\n", c.nameOf(m), m.ID, readableMentions(m.Content, c.names))
		}
	}
	if len(c.images.inputs) > 0 {
		b.WriteString("\nThe images, attached after this text in this order:\n")
		for _, si := range c.images.inputs {
			who := c.nameOf(si.msg)
			if si.msg.IsSelf {
				who = selfName + " (you)"
			}
			fmt.Fprintf(&b, "%d. %s's %s %s, in msg %s\n", si.n, who, sourceName(si.im.Source), imageName(si.im), si.msg.ID)
		}
	}
	if cfg.Images.Enabled && c.images.hasEarlier() {
		b.WriteString("\nAn \"earlier image\" was posted before your last message here, with the conversation you " +
			"answered then; it is not attached again (image_lookup describes one again when offered).\n")
	}
	return b.String()
}

func sourceName(source string) string {
	if source == "embed" {
		return "linked image"
	}
	return "attachment"
}

func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// nameOf is how the conversation names a message's author: the preferred name of their persona
// when they gave one, else the name Discord shows.
func (c *convo) nameOf(m store.Message) string {
	for _, p := range c.people {
		if p.id == m.AuthorID && p.persona != nil && p.persona.PreferredName != "" {
			return p.persona.PreferredName
		}
	}
	return m.AuthorName
}

// askers are the burst's messages when several people wrote them (a coalesced burst of more
// than one author), oldest first; nil when one person wrote them all.
func (c *convo) askers() []store.Message {
	authors := map[string]bool{}
	for _, m := range c.triggers {
		authors[m.AuthorID] = true
	}
	if len(authors) < 2 {
		return nil
	}
	return c.triggers
}
