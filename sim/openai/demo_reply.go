package openaisim

import (
	"fmt"
	"strings"
)

// The demo brain's replies: short, in plain words, to the member by name,
// honest that a demo cannot really answer. A reply quotes at most a short
// question or request it was asked, never the prompt.

// demoAnswer writes the reply to who, who said said. Spoken replies have no
// quotation marks.
func demoAnswer(who, said, name string, spoken bool) string {
	if strings.HasPrefix(said, DemoPlaceholderPrefix) {
		return "I heard you speak, but I'm the demo brain and can't make out words. Type what you say in the caption box and I'll hear it."
	}
	if who == "" {
		who = "friend"
	}
	rest, greeting := stripOpening(strings.Fields(mentionRE.ReplaceAllString(said, " ")), name)
	ws := words(strings.Join(rest, " "))
	pick := len(ws) % 3 // wording varies with the message; the same message gets the same words
	var out string
	switch {
	case len(ws) == 0 && greeting:
		out = []string{"Hey %[1]s! Good to see you. What's on your mind?", "Hi %[1]s! I'm here. What's up?",
			"Hello %[1]s, nice to hear from you. How's your day going?"}[pick]
	case len(ws) == 0:
		out = "Yes, %[1]s? I'm listening."
	case has(ws, "thanks", "thank", "thx", "ty"):
		out = "Any time, %[1]s. Happy to help."
	case isAway(ws):
		out = []string{"See you later, %[1]s!", "Catch you in a bit, %[1]s.", "Sure thing, %[1]s. See you soon!"}[pick]
	case isGreeting(ws):
		out = greetingReply(ws)
	case allFiller(ws):
		out = []string{"Ha, glad you think so, %[1]s.", "Right there with you, %[1]s.", "Ha, same here, %[1]s."}[pick]
	case isRequest(ws):
		out = requestReply(rest, pick)
	case isQuestion(said, ws) && yesNoStarts[ws[0]]:
		out = []string{"Yes, I think so, %[1]s, but I'm only the demo brain, so don't quote me on that.",
			"I'd say yes, %[1]s. Then again, I'm only the demo brain: ask me again with a real model.",
			"Probably yes, %[1]s! That's the demo brain's best guess, anyway."}[pick]
	case isQuestion(said, ws):
		out = questionReply(rest, pick)
	default:
		out = []string{"Oh nice, %[1]s. Tell me more!", "Ha, I hear you, %[1]s.", "That's good to know, %[1]s. How did it go?"}[pick]
	}
	out = fmt.Sprintf(out, who)
	if spoken {
		out = strings.ReplaceAll(strings.ReplaceAll(out, "\"", ""), "…", "")
	}
	return out
}

// stripOpening drops a greeting and the bot's name from the start of the
// words ("hey banter, …"), and reports whether there was a greeting.
func stripOpening(fields []string, name string) (rest []string, greeting bool) {
	for len(fields) > 0 {
		w := strings.ToLower(strings.Trim(fields[0], wordTrim))
		if !greetWords[w] && w != strings.ToLower(name) && w != "@"+strings.ToLower(name) && w != "" {
			break
		}
		greeting = greeting || greetWords[w]
		fields = fields[1:]
	}
	return fields, greeting
}

func has(ws []string, any ...string) bool {
	for _, w := range ws {
		for _, a := range any {
			if w == a {
				return true
			}
		}
	}
	return false
}

// greetingReply answers a greeting or a return ("i'm back").
func greetingReply(ws []string) string {
	line := strings.Join(ws, " ")
	for _, p := range backPhrases {
		if strings.HasPrefix(line, p) {
			return "Welcome back, %[1]s!"
		}
	}
	if line == "back" || line == "re" || line == "wb" {
		return "Welcome back, %[1]s!"
	}
	return "Hey %[1]s! Good to see you."
}

var requestStarts = set("tell sing give show explain say play help write make find draw recommend summarize")

// yesNoStarts begin questions that a yes answers.
var yesNoStarts = set("are can could do does did will would is have has am should")

// politeOpenings are dropped in front of a request: "can you", "please".
var politeOpenings = [][]string{{"can", "you"}, {"could", "you"}, {"would", "you"}, {"will", "you"}, {"please"}, {"pls"}, {"plz"}}

// requestWords returns the words of a request without its polite opening
// ("can you tell me a joke" → "tell me a joke"), or nil when ws asks nothing.
func requestWords(ws []string) []string {
	for again := true; again; {
		again = false
		for _, p := range politeOpenings {
			if len(ws) > len(p) && strings.EqualFold(strings.Join(ws[:len(p)], " "), strings.Join(p, " ")) {
				ws, again = ws[len(p):], true
			}
		}
	}
	if len(ws) > 0 && requestStarts[ws[0]] {
		return ws
	}
	return nil
}

// isRequest reports whether the words ask the bot to do something.
func isRequest(ws []string) bool { return requestWords(ws) != nil }

// requestReply declines a request kindly, in the member's words turned
// round: "tell me a joke" → "I'd love to tell you a joke".
func requestReply(fields []string, pick int) string {
	ws := requestWords(words(strings.Join(fields, " ")))
	what := swapPerson(strings.Join(ws[:min(len(ws), 8)], " "))
	if len(ws) > 8 {
		what += "…"
	}
	what = strings.ReplaceAll(what, "%", "%%")
	return []string{
		"I'd love to " + what + ", %[1]s, but that takes a real model; I'm only the demo brain.",
		"Sorry %[1]s, the demo brain can't " + what + ". Connect a real model and ask me again!",
		"Ha, %[1]s, I wish I could " + what + ". I'm only the demo brain, though.",
	}[pick]
}

// questionReply answers a question it cannot really answer, quoting it
// (as it was asked) when it is short.
func questionReply(fields []string, pick int) string {
	q := strings.Join(fields, " ")
	if i := strings.LastIndex(q, "?"); i >= 0 {
		q = q[:i] // the question, not what follows it ("really? tell me more" quotes "really?")
		fields = strings.Fields(q)
	}
	q = strings.TrimRight(q, ",.!?;: ")
	if len(fields) > 8 || q == "" {
		return []string{"Good question, %[1]s! I'm only the demo brain, so I can't answer it properly. Anyone here know?",
			"Hmm, I'd like to know that too, %[1]s. With a real model behind me I could have a go.",
			"That's a good one, %[1]s. The demo brain can't look it up, but I'm curious what everyone thinks."}[pick]
	}
	q = strings.ReplaceAll(q, "%", "%%")
	return []string{"Good question, %[1]s: \"" + q + "?\" I'm only the demo brain, so I can't answer it properly. Anyone here know?",
		"\"" + q + "?\" I'd like to know that too, %[1]s. With a real model behind me I could have a go.",
		"Hmm, %[1]s, \"" + q + "?\" The demo brain can't look that up, but I'm curious what everyone thinks."}[pick]
}

var personSwap = map[string]string{"i": "you", "i'm": "you're", "me": "you", "my": "your", "mine": "yours",
	"am": "are", "we": "you all", "our": "your", "us": "you all", "i've": "you've", "myself": "yourself",
	"you": "I", "your": "my", "you're": "I'm", "yours": "mine", "yourself": "myself"}

// swapPerson turns the member's words round ("tell me" → "tell you").
func swapPerson(s string) string {
	ws := strings.Fields(s)
	for i, w := range ws {
		if r, ok := personSwap[strings.ToLower(w)]; ok {
			ws[i] = r
		}
	}
	return strings.Join(ws, " ")
}
