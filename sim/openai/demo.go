package openaisim

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
)

// DemoRules returns the demo brain: a rule set that answers a chat bot the
// way a small, honest model would, without any key or network. It is what
// the playground (`banter playground` without OPENAI_API_KEY) runs on.
//
// Every answer reads the request and is deterministic:
//
//   - a chat reply offered the send_discord_message tool answers the message
//     the prompt names ("Message to answer: msg ID from NAME"), quoting a few
//     of its words, with a reply tool call to that message;
//   - a spoken reply (a voice prompt) answers the last user line in one or
//     two sentences;
//   - whether an unaddressed turn gets an answer or [SKIP] follows the
//     eagerness the prompt expresses (its wording for the eagerness band) and
//     a hash of the message, so the same message at the same eagerness always
//     gets the same answer, and a higher eagerness answers more;
//   - the YES/NO reply classifier reads "Eagerness: N/100" and the latest
//     utterance the same way; the direct-address classifier answers a
//     confidence from where the bot's name appears;
//   - a draft review keeps the draft;
//   - a transcription that no queued transcript (QueueTranscripts) answers
//     becomes a labelled placeholder: the demo cannot hear words, so text
//     meant to be said is queued as the transcript of the next utterance.
//
// The replies never repeat the prompt: at most the first words of the
// message they answer.
func DemoRules() []Rule {
	return []Rule{
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
	eagerLine   = regexp.MustCompile(`Eagerness: (\d+)/100`)
	latestLine  = regexp.MustCompile(`Latest utterance, from ([^:]+): "(.*)"`)
	judgedLine  = regexp.MustCompile(`(?s)Message to judge, from [^:]+:\n(.*?)\n`)
	nameIsRE    = regexp.MustCompile(`Your name is ([^\s.(]+)|You are ([^\s,.]+), a|judge for ([^\s,]+),`)
)

// demoChat answers a text turn with a send_discord_message call.
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
					said = content
				}
			}
		}
	}
	if !demoWants(r.Prompt, said) {
		return Reply{Skip: true}
	}
	args, _ := json.Marshal(map[string]any{"mode": "reply", "target_message_id": id, "text": demoAnswer(who, said, demoName(r.Prompt), false)})
	return Reply{ToolCalls: []ToolCall{{Name: "send_discord_message", Arguments: string(args)}}}
}

// demoSpoken answers the last user line of a conversation (a voice turn:
// "Speaker: words").
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
	if !demoWants(r.Prompt, said) {
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

// demoYesNo is the voice reply classifier: YES when the utterance's score
// is under the eagerness in the prompt.
func demoYesNo(r Request) Reply {
	eager := 50
	if m := eagerLine.FindStringSubmatch(r.Prompt); m != nil {
		eager, _ = strconv.Atoi(m[1])
	}
	said := r.LastUser
	if m := latestLine.FindStringSubmatch(r.Prompt); m != nil {
		said = m[2]
	}
	if strings.HasPrefix(said, DemoPlaceholderPrefix) {
		// Wordless speech: only an eager bot takes it up (to say how to talk to it).
		if eager > 80 {
			return Reply{Text: "YES"}
		}
		return Reply{Text: "NO"}
	}
	if demoScore(said) < eager {
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

// demoEagerness maps the generation prompt's guidance wording (banter's
// decision.EagernessGuidance bands, the forced-reply lines) to how willing
// the demo brain is to answer, 0-100.
var demoEagerness = []struct {
	phrase string
	level  int
}{
	{"You must reply", 100},
	{"You were probably addressed", 100},
	{"continuing their conversation with you", 100},
	{"You decided this turn deserves a response", 100},
	{"Only speak when someone addresses you directly", 0},
	{"You are very reserved", 10},
	{"You are reserved", 30},
	{"Join in when you have something relevant", 50},
	{"You are chatty", 75},
	{"You are very eager", 95},
	{"You just joined the voice channel", 100},
}

// demoWants decides whether the demo brain answers said, given the prompt.
func demoWants(prompt, said string) bool {
	if !strings.Contains(prompt, SkipText) {
		return true // nothing offers a way out
	}
	for _, e := range demoEagerness {
		if strings.Contains(prompt, e.phrase) {
			return demoScore(said) < e.level
		}
	}
	return demoScore(said) < 50
}

// demoScore is a stable 0-99 score of a message; questions score lower (are
// answered more readily).
func demoScore(said string) int {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(strings.TrimSpace(said))))
	s := int(h.Sum32() % 100)
	if strings.Contains(said, "?") {
		s = s * 2 / 3
	}
	return s
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

var greetingWords = map[string]bool{"hi": true, "hey": true, "hello": true, "yo": true, "hiya": true, "morning": true, "evening": true, "sup": true}

// demoAnswer writes the reply to who, who said said. Spoken replies are one
// or two sentences of plain words.
func demoAnswer(who, said, name string, spoken bool) string {
	if strings.HasPrefix(said, DemoPlaceholderPrefix) {
		return "I heard you speak, but I'm the demo brain and can't make out words. Type what you say in the caption box and I'll hear it."
	}
	if who == "" {
		who = "friend"
	}
	words := strings.Fields(mentionRE.ReplaceAllString(said, ""))
	var greeting bool
	for len(words) > 0 {
		w := strings.ToLower(strings.Trim(words[0], ",.!?;:'\""))
		if !greetingWords[w] && w != strings.ToLower(name) && w != "" {
			break
		}
		greeting = greeting || greetingWords[w]
		words = words[1:]
	}
	topic := strings.Join(words[:min(len(words), 6)], " ")
	topic = strings.TrimRight(topic, ",.!?;: ")
	if len(words) > 6 {
		topic += "…"
	}
	lower := strings.ToLower(said)
	pick := demoScore(said) % 3
	var out string
	switch {
	case topic == "" && greeting:
		out = []string{"Hey %[1]s! Good to see you. What's on your mind?", "Hi %[1]s! I'm here. What's up?", "Hello %[1]s, nice to hear from you. How's your day going?"}[pick]
	case topic == "":
		out = "Yes, %[1]s? I'm listening."
	case strings.Contains(lower, "thank"):
		out = "Any time, %[1]s. Happy to help."
	case strings.Contains(said, "?") && yesNoStarts[strings.ToLower(words[0])]:
		out = []string{"Yes, I think so, %[1]s. Well, the demo brain thinks so; ask me again with a real model.",
			"I'd say yes, %[1]s. But I'm only the demo brain, so don't quote me.",
			"Probably, %[1]s! The demo brain says yes to \"%[2]s\"."}[pick]
	case isRequest(words):
		out = []string{"I'd love to, %[1]s, but \"%[2]s\" needs a real model; I'm only the demo brain.",
			"Ask me that again with a real model connected, %[1]s: \"%[2]s\" is beyond the demo brain.",
			"Sorry %[1]s, the demo brain can't do \"%[2]s\". It can tell you that you asked, though!"}[pick]
	case strings.Contains(said, "?"):
		out = []string{"Good question, %[1]s: \"%[2]s\". I'm only the demo brain, so my honest answer is that it depends. What do you think?",
			"Hmm, \"%[2]s\"? With a real model behind me I could say more, %[1]s; my demo guess is yes.",
			"You're asking \"%[2]s\", %[1]s. I'd love to know too. Anyone here have an idea?"}[pick]
	default:
		topic = swapPerson(topic)
		out = []string{"Ha, noted, %[1]s: %[2]s. Tell me more.",
			"So %[2]s? That sounds interesting, %[1]s. What happened next?",
			"I hear you, %[1]s: %[2]s. That's a good one."}[pick]
	}
	out = fmt.Sprintf(out, who, topic)
	if spoken {
		out = strings.ReplaceAll(strings.ReplaceAll(out, "\"", ""), "…", "")
	}
	return out
}

var requestStarts = map[string]bool{"tell": true, "sing": true, "give": true, "show": true, "explain": true, "say": true,
	"play": true, "help": true, "write": true, "please": true}

// yesNoStarts begin questions that a yes answers.
var yesNoStarts = map[string]bool{"are": true, "can": true, "could": true, "do": true, "does": true, "is": true,
	"will": true, "would": true, "did": true, "have": true, "has": true, "am": true}

// isRequest reports whether the words ask the bot to do something.
func isRequest(words []string) bool {
	return len(words) > 0 && requestStarts[strings.ToLower(strings.Trim(words[0], ",.!?;:"))]
}

var personSwap = map[string]string{"i": "you", "i'm": "you're", "me": "you", "my": "your", "mine": "yours",
	"am": "are", "we": "you all", "our": "your", "us": "you all", "i've": "you've", "myself": "yourself"}

// swapPerson turns a quoted statement into reported speech ("my run" → "your run").
func swapPerson(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if r, ok := personSwap[strings.ToLower(w)]; ok {
			words[i] = r
		}
	}
	return strings.Join(words, " ")
}
