package openaisim

import (
	"regexp"
	"strconv"
	"strings"
)

// The demo brain's judgement: what kind of line it is asked about, and
// whether, at the eagerness the request expresses, it joins in. It reads
// only the request, as a model would: the guidance wording banter puts in
// the prompt for the eagerness band (decision.EagernessGuidance, the forced
// lines), or the voice classifier's "Eagerness: N/100"; the participants'
// names; whether the message replies to someone else's.

// demoKind is what an unaddressed line of chat is, as the demo brain reads it.
type demoKind uint8

const (
	kindUnknown      demoKind = iota
	kindFiller                // an acknowledgement, laughter or a reaction: "lol", "ok", "nice", "same"
	kindToOther               // aimed at another member (by name or mention) or a reply to another's message
	kindAway                  // leaving or stepping away: "brb", "gtg", "ok see you later", "night all"
	kindGreeting              // a greeting or a return: "morning all", "hey", "i'm back"
	kindStatement             // news, an opinion, a remark: "just finished my first 10k"
	kindQuestion              // a question to the room: "what's everyone up to this weekend?"
	kindHelpQuestion          // a question asking the room for help or facts: "anyone know a good pizza place?"
)

var kindNames = [...]string{"unknown", "filler", "to_other", "away", "greeting", "statement", "question", "help_question"}

// String names the kind, e.g. "help_question".
func (k demoKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// joinLevel is the lowest eagerness at which the demo brain joins an
// unaddressed line of each kind (101: never):
//
//	help questions      41 (balanced and up: "join in when you have something … helpful")
//	other questions     61 (chatty and up: "react and join in when the topic interests you")
//	statements          61
//	greetings, returns  81 (eager: "join in on almost every turn")
//	leaving, "brb"      81
//	filler              never (a reply would be filler)
//	aimed at another    never (a private exchange)
var joinLevel = [...]int{
	kindUnknown:      61,
	kindFiller:       101,
	kindToOther:      101,
	kindAway:         81,
	kindGreeting:     81,
	kindStatement:    61,
	kindQuestion:     61,
	kindHelpQuestion: 41,
}

// demoMood is how the request asks the demo brain to treat a turn.
type demoMood struct {
	forced bool // the prompt says it must reply
	level  int  // the eagerness it expresses, 0-100
}

// demoEagerness maps the generation prompt's guidance wording (banter's
// decision.EagernessGuidance bands, the forced and follow-up lines) to a level.
var demoEagerness = []struct {
	phrase string
	level  int
}{
	{"You were probably addressed", 100},
	{"continuing their conversation with you", 100},
	{"You decided this turn deserves a response", 100},
	{"Only speak when someone addresses you directly", 0},
	{"You are very reserved", 10},
	{"You are reserved", 30},
	{"Join in when you have something relevant", 50},
	{"You are chatty", 70},
	{"You are very eager", 90},
}

// readMood reads how willing the request wants the demo brain to be.
func readMood(prompt string) demoMood {
	if m := eagerLine.FindStringSubmatch(prompt); m != nil { // the voice classifier
		n, _ := strconv.Atoi(m[1])
		return demoMood{level: n}
	}
	if strings.Contains(prompt, "You must reply") || strings.Contains(prompt, "You just joined the voice channel") ||
		!strings.Contains(prompt, SkipText) {
		return demoMood{forced: true, level: 100} // nothing offers a way out
	}
	for _, e := range demoEagerness {
		if strings.Contains(prompt, e.phrase) {
			return demoMood{level: e.level}
		}
	}
	return demoMood{level: 50}
}

// joins reports whether the demo brain, in this mood, answers a line of kind k.
func (m demoMood) joins(k demoKind) bool {
	if m.forced {
		return true
	}
	return int(k) < len(joinLevel) && m.level >= joinLevel[k]
}

var (
	participantItem = regexp.MustCompile(`(?m)^- ([^\s(:]+)(?: \(user id|:)`)
	participantList = regexp.MustCompile(`(?:Participants|In the channel): ([^\n.]+)`)
	replyingTo      = regexp.MustCompile(`is replying to this message:\n\[msg [^\]]*\] ([^\n:]+):`)
	laughter        = regexp.MustCompile(`^(a?h[ae])+h?$|^(he)+h?$|^lo+l(ol)*$|^lmf?a+o+$|^x+d+$|^rofl$|^k+$|^o+f+$`)
	wordTrim        = ",.!?;:'\"()*~_…"
)

// participants are the names of the people the request lists (text: the
// "Participants:" lines; voice: "In the channel:" or the classifier's list).
func participants(prompt string) map[string]bool {
	names := map[string]bool{}
	for _, m := range participantItem.FindAllStringSubmatch(prompt, -1) {
		names[strings.ToLower(m[1])] = true
	}
	for _, m := range participantList.FindAllStringSubmatch(prompt, -1) {
		for _, n := range strings.Split(m[1], ",") {
			if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
				names[n] = true
			}
		}
	}
	return names
}

// words are the lower-cased words of s, punctuation trimmed, mentions dropped.
func words(s string) []string {
	var out []string
	for _, w := range strings.Fields(strings.ToLower(mentionRE.ReplaceAllString(s, " "))) {
		if w = strings.Trim(w, wordTrim); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// classify reads what kind of line said is: who said it and the request
// around it tell a line aimed at someone else.
func classify(prompt, who, said string) demoKind {
	ws := words(said)
	switch {
	case aimedAtOther(prompt, who, said, ws):
		return kindToOther
	case len(ws) == 0 || allFiller(ws):
		return kindFiller
	case isAway(ws):
		return kindAway
	case isGreeting(ws):
		return kindGreeting
	case isQuestion(said, ws) && isHelp(ws):
		return kindHelpQuestion
	case isQuestion(said, ws):
		return kindQuestion
	}
	return kindStatement
}

// aimedAtOther: a mention (of anyone but the bot: a mention of the bot is a
// forced turn), another participant's name opening or closing the line, or a
// reply to someone else's message.
func aimedAtOther(prompt, who, said string, ws []string) bool {
	if mentionRE.MatchString(said) {
		return true
	}
	if m := replyingTo.FindStringSubmatch(prompt); m != nil && !strings.HasSuffix(m[1], "(you)") {
		return true
	}
	if len(ws) == 0 {
		return false
	}
	people := participants(prompt)
	delete(people, strings.ToLower(who))
	first, last := strings.TrimPrefix(ws[0], "@"), strings.TrimPrefix(ws[len(ws)-1], "@")
	return people[first] || (len(ws) > 1 && people[last])
}

var fillerWords = set("ok okay okk kk ye yea yeah yep yup yes no nah nope sure nice cool true same mood fair gg ggs ty thx " +
	"np oof rip wow omg damn indeed right agreed based facts ikr fr lmk ah oh ooh hmm hm mhm huh welp yay " +
	"that's thats so too me also great awesome good point makes sense sounds one enough exactly totally " +
	"love it this lit bet noted alright aight kinda wild crazy fun real +1")

var awayWords = set("brb gtg g2g afk bbl bbiab cya bye byee goodnight gn nn ttyl laters")

var awayPhrases = []string{"see you", "see ya", "good night", "night all", "night everyone", "heading out", "heading off",
	"logging off", "gotta go", "got to go", "off to bed", "going to bed", "be right back", "be back", "back later",
	"signing off", "catch you", "talk later", "later all", "later everyone", "stepping away"}

var greetWords = set("hi hey hello hiya yo sup howdy morning evening afternoon gm heya hai wb")

var backPhrases = []string{"i'm back", "im back", "i am back", "back now", "and i'm back", "back again", "i have returned"}

var questionStarts = set("who what whats what's when where why how how's hows who's where's which whose is are am can could " +
	"do does did will would should shall has have anyone anybody someone somebody any wanna")

var helpWords = []string{"anyone", "anybody", "someone", "somebody", "any idea", "any ideas", "how do i", "how do you",
	"how can i", "how to", "recommend", "recommendation", "what's the best", "whats the best", "what is the best",
	"where can i", "does it", "is it worth", "know how", "know if", "know a", "know any", "suggestions", "tips", "help"}

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// allFiller: every word is an acknowledgement, laughter or a reaction (or
// the line has no letters at all: emoji, "+1", "??").
func allFiller(ws []string) bool {
	for _, w := range ws {
		if !fillerWords[w] && !laughter.MatchString(w) && strings.ContainsFunc(w, isLetter) {
			return false
		}
	}
	return true
}

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' }

// isAway: a short line that says the member is leaving or stepping away.
func isAway(ws []string) bool {
	if len(ws) > 9 {
		return false
	}
	line := strings.Join(ws, " ")
	for _, w := range ws {
		if awayWords[w] {
			return true
		}
	}
	for _, p := range awayPhrases {
		if strings.Contains(line, p) {
			return true
		}
	}
	return false
}

// isGreeting: a short greeting to the room ("morning all", "hey guys") or a
// return ("i'm back").
func isGreeting(ws []string) bool {
	line := strings.Join(ws, " ")
	for _, p := range backPhrases {
		if strings.HasPrefix(line, p) && len(ws) <= 5 {
			return true
		}
	}
	if line == "back" || line == "re" {
		return true
	}
	if len(ws) > 4 {
		return false
	}
	start := 0
	if ws[0] == "good" && len(ws) > 1 {
		start = 1
	}
	return greetWords[ws[start]]
}

// isQuestion: a question mark, or a line that opens like a question.
func isQuestion(said string, ws []string) bool {
	if strings.Contains(said, "?") {
		return true
	}
	return questionStarts[ws[0]] && len(ws) > 2 && !(ws[0] == "what" && ws[1] == "a") // not "what a game"
}

// isHelp: the question asks the room for help, advice or facts.
func isHelp(ws []string) bool {
	line := " " + strings.Join(ws, " ") + " "
	for _, p := range helpWords {
		if strings.Contains(line, " "+p+" ") {
			return true
		}
	}
	return false
}
