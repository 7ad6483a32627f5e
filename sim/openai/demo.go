package openaisim

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// DemoRules returns the demo brain: a rule set that answers a chat bot the
// way a small, honest model would, without any key or network. It is what
// the playground (`banter playground` without OPENAI_API_KEY) runs on.
//
// Every answer reads the request and is deterministic:
//
//   - a chat reply offered the send_discord_message tool answers the message
//     the prompt names ("Message to answer: msg ID from NAME"), to its author
//     by name, with a reply tool call to that message (demo_reply.go);
//   - a spoken reply (a voice prompt) answers the last user line in one or
//     two sentences;
//   - whether a turn gets an answer or [SKIP] follows what a model would make
//     of the request: a turn the prompt says it must answer (banter's forced
//     lines) is always answered; an unaddressed one is read for what kind of
//     line it is (filler such as "lol", a line aimed at someone else, a
//     "brb" or goodbye, a greeting, a statement, a question to the room, a
//     question asking the room for help) and joined when the eagerness the
//     prompt expresses (its wording for the eagerness band) reaches that
//     kind's level (joinLevel); no coin is flipped;
//   - the YES/NO reply classifier reads "Eagerness: N/100" and the latest
//     utterance and answers by the same rules; the direct-address
//     classifier answers a confidence from where the bot's name appears;
//   - a draft review keeps the draft;
//   - a memory extraction (the record_facts tool, memory/prompt.go) records
//     the simple facts members state about themselves ("I have a cat named
//     Miso", "I live in Lyon", corrections of the known facts numbered in the
//     request), or none (demo_memory.go); a question about a fact the chat
//     prompt says it remembers is answered with that fact;
//   - a transcription that no queued transcript (QueueTranscripts) answers
//     becomes a labelled placeholder: the demo cannot hear words, so text
//     meant to be said is queued as the transcript of the next utterance.
//
// The replies never repeat the prompt: at most a short question or request
// of the message they answer.
func DemoRules() []Rule {
	return []Rule{
		{Name: "demo: memory extraction", Match: Match{Tool: demoExtractTool}, Respond: demoExtract},
		{Name: "demo: reply classifier", Match: Match{PromptPattern: `Answer YES or NO|one word: YES or NO`}, Respond: demoYesNo},
		{Name: "demo: direct-address classifier", Match: Match{PromptPattern: `number from 0 to 1`}, Respond: demoConfidence},
		{Name: "demo: draft review", Match: Match{PromptPattern: `Draft reply to review:`}, Respond: demoReview},
		{Name: "demo: chat reply", Match: Match{Tool: "send_discord_message"}, Respond: demoChat},
		{Name: "demo: reply", Match: Match{Endpoint: EndpointResponses}, Respond: demoSpoken},
		{Name: "demo: reply", Match: Match{Endpoint: EndpointChatCompletions}, Respond: demoSpoken},
		{Name: "demo: reply", Match: Match{Endpoint: EndpointRealtimeResponse}, Respond: demoSpoken},
		{Name: "demo: transcription", Match: Match{Endpoint: EndpointTranscriptions}, Respond: demoTranscript},
		{Name: "demo: transcription", Match: Match{Endpoint: EndpointRealtimeTranscription}, Respond: demoTranscript},
	}
}

// DemoPlaceholderPrefix starts the transcript of speech the demo brain
// cannot put words to (no queued transcript).
const DemoPlaceholderPrefix = "(speech without a caption"

func demoTranscript(r Request) Reply {
	if r.AudioOffset > 0 {
		return Reply{NoSpeech: true} // a later span of a transcription session: said once, at its first
	}
	return Reply{Transcript: fmt.Sprintf("%s, %.1f s: the demo brain cannot hear words; type them in the caption box)",
		DemoPlaceholderPrefix, r.Audio.Seconds())}
}

var (
	msgToAnswer = regexp.MustCompile(`Message to answer: msg (\S+) from (.+?)(?: \(|\.\n|\.$)`)
	voiceLine   = regexp.MustCompile(`(?s)^([^:\n]{1,64}): (.*)$`)
	mentionRE   = regexp.MustCompile(`<@!?&?\d+>`)
	// imageNoteRE matches the notes banter appends to a line for the images
	// its message shows (text/images.go): not the member's words.
	imageNoteRE = regexp.MustCompile(` ?\[image (?:\d+: [^\]]*|unavailable|not shown: [^\]]*)\]`)
	eagerLine   = regexp.MustCompile(`Eagerness: (\d+)/100`)
	latestLine  = regexp.MustCompile(`Latest utterance, from ([^:]+): "(.*)"`)
	judgedLine  = regexp.MustCompile(`(?s)Message to judge, from [^:]+:\n(.*?)\n`)
	nameIsRE    = regexp.MustCompile(`Your name is ([^\s.(]+)|You are ([^\s,.]+), a|judge for ([^\s,]+),`)
)

// demoChat answers a text turn with a send_discord_message call, or [SKIP].
func demoChat(r Request) Reply {
	m := msgToAnswer.FindStringSubmatch(r.LastUser)
	if m == nil {
		return demoSpoken(r)
	}
	id, who := m[1], m[2]
	said := ""
	for _, l := range strings.Split(r.LastUser, "\n") {
		if rest, ok := strings.CutPrefix(l, "[msg "+id+" · "); ok {
			if _, text, ok := strings.Cut(rest, "] "); ok {
				if _, content, ok := strings.Cut(text, ": "); ok {
					said = strings.TrimSpace(imageNoteRE.ReplaceAllString(content, ""))
				}
			}
		}
	}
	if !readMood(r.Prompt).joins(classify(r.Prompt, who, said)) {
		return Reply{Skip: true}
	}
	text := demoAnswer(who, said, demoName(r.Prompt), false)
	if ws := words(said); len(ws) > 0 && isQuestion(said, ws) {
		if fact := demoRecall(r.Prompt, said); fact != "" {
			text = fmt.Sprintf("%s, from what I remember: %s.", who, fact)
		}
	}
	args, _ := json.Marshal(map[string]any{"mode": "reply", "target_message_id": id, "text": text})
	return Reply{ToolCalls: []ToolCall{{Name: "send_discord_message", Arguments: string(args)}}}
}

// demoSpoken answers the last user line of a conversation (a voice turn:
// "Speaker: words"), or [SKIP].
func demoSpoken(r Request) Reply {
	name := demoName(r.Prompt)
	last := strings.TrimSpace(r.LastUser)
	if strings.HasPrefix(last, "(") && strings.Contains(last, "joins the voice channel") {
		return Reply{Text: "Hi everyone, " + name + " here. Say my name when you want me."}
	}
	who, said := "", last
	if m := voiceLine.FindStringSubmatch(last); m != nil {
		who, said = m[1], m[2]
	}
	if !strings.HasPrefix(said, DemoPlaceholderPrefix) && !readMood(r.Prompt).joins(classify(r.Prompt, who, said)) {
		return Reply{Skip: true}
	}
	return Reply{Text: demoAnswer(who, said, name, true)}
}

// demoReview keeps the draft a review request carries.
func demoReview(r Request) Reply {
	_, draft, ok := strings.Cut(r.LastUser, "Draft reply to review:\n")
	if !ok || strings.TrimSpace(draft) == "" {
		return Reply{Skip: true}
	}
	return Reply{Text: strings.TrimSpace(draft)}
}

// demoYesNo is the voice reply classifier: YES when, at the eagerness the
// prompt gives ("Eagerness: N/100"), the demo brain would join the latest
// utterance (the same rules as its replies).
func demoYesNo(r Request) Reply {
	mood := readMood(r.Prompt)
	mood.forced = false // the classifier decides; it is never told it must
	who, said := "", r.LastUser
	if m := latestLine.FindStringSubmatch(r.Prompt); m != nil {
		who, said = m[1], m[2]
	}
	if strings.HasPrefix(said, DemoPlaceholderPrefix) {
		// Wordless speech: only an eager bot takes it up (to say how to talk to it).
		if mood.level > 80 {
			return Reply{Text: "YES"}
		}
		return Reply{Text: "NO"}
	}
	if mood.joins(classify(r.Prompt, who, said)) {
		return Reply{Text: "YES"}
	}
	return Reply{Text: "NO"}
}

// demoConfidence is the text direct-address classifier: high when the
// message asks something and names the bot, low otherwise.
func demoConfidence(r Request) Reply {
	said := r.LastUser
	if m := judgedLine.FindStringSubmatch(r.Prompt); m != nil {
		said = m[1]
	}
	switch {
	case strings.Contains(r.Prompt, "The name appears as") && strings.Contains(said, "?"):
		return Reply{Text: "0.9"}
	case strings.Contains(r.Prompt, "The name appears as"):
		return Reply{Text: "0.6"}
	}
	return Reply{Text: "0.1"}
}

// demoName is the bot's name as the prompt gives it ("banter" if absent).
func demoName(prompt string) string {
	if m := nameIsRE.FindStringSubmatch(prompt); m != nil {
		for _, g := range m[1:] {
			if g != "" {
				return g
			}
		}
	}
	return "banter"
}
