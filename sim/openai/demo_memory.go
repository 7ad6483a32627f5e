package openaisim

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The demo brain's memory: it answers banter's fact extraction (memory/prompt.go: the
// record_facts tool, the known facts numbered, then the batch as "[msg ID] NAME (user id
// UID): words") by reading a few plain forms of a fact a member states about themselves:
//
//	"I have a cat named Miso"          → "NAME has a cat named Miso"
//	"I live in Lyon", "I moved to Paris", "I now live in Paris"
//	                                   → "NAME lives in Lyon" (one place: a later one corrects it)
//	"my favourite X is Y"              → "NAME's favourite X is Y" (one per X)
//	"I work as a nurse"                → "NAME works as a nurse" (one job)
//	"I'm 34 years old"                 → "NAME is 34 years old" (one age)
//
// A fact of one of the single-valued kinds (place, job, age, a favourite X) whose subject
// already has a known fact of that kind supersedes it (its number), or repeats it (same_as)
// when it says the same; a pet said again repeats its fact. Questions ("do I live in Lyon?")
// and anything else give no fact. The answer is exactly what memory/parse.go accepts.

// demoExtractTool is the extraction's tool (memory.recordFactsName).
const demoExtractTool = "record_facts"

var (
	demoKnownLine = regexp.MustCompile(`^(\d+)\. \[user id (.+?), (.*)\] (.*)$`)
	demoMsgLine   = regexp.MustCompile(`^\[msg (\S+)\] (.*?) \(user id (\S+)\): (.*)$`)
	demoSentence  = regexp.MustCompile(`[^.!?\n]+[.!?]*`)
	// The forms of a fact, each on one sentence; the value runs to a stop word (phrase).
	demoPetRE    = regexp.MustCompile(`(?i)\bI (?:have|got|own) (an?|two|three|\d+) ([a-z]+) (?:named|called) (.+)`)
	demoPlaceRE  = regexp.MustCompile(`(?i)\bI(?:'ve| have)? (?:now |just |recently )?(?:live|moved|relocated) (?:in|to) (.+)`)
	demoFavRE    = regexp.MustCompile(`(?i)\bmy (?:favou?rite) ([a-z]+(?: [a-z]+)?) is (.+)`)
	demoJobRE    = regexp.MustCompile(`(?i)\bI (?:now )?work as (an?) (.+)`)
	demoAgeRE    = regexp.MustCompile(`(?i)\bI(?:'m| am) (\d{1,3}) years? old\b`)
	demoAgeFact  = regexp.MustCompile(`^is (\d{1,3}) years old$`)
	demoStopWord = map[string]bool{"and": true, "but": true, "with": true, "since": true, "because": true, "so": true,
		"now": true, "for": true, "which": true, "who": true, "where": true, "though": true, "although": true,
		"last": true, "this": true, "at": true, "in": true, "on": true, "next": true, "when": true, "while": true, "if": true, "lol": true}
)

// demoFactSay is one fact the demo brain read: its kind ("pet", "place", "job", "age",
// "favourite:X"), what it says after the subject's name, and its source.
type demoFactSay struct {
	subject, name, source string
	kind, rest            string
}

// demoKnown is a known fact as numbered in the request.
type demoKnown struct {
	n             int
	subject, name string
	kind, rest    string
}

// demoExtract answers a record_facts request with the facts its batch states.
func demoExtract(r Request) Reply {
	known, said := demoReadExtraction(r.LastUser)
	type factOut struct {
		Subject    string   `json:"subject"`
		Statement  string   `json:"statement"`
		Sources    []string `json:"source_message_ids"`
		Supersedes int      `json:"supersedes"`
		SameAs     int      `json:"same_as"`
	}
	facts := []factOut{}
	for _, f := range said {
		out := factOut{Subject: f.subject, Statement: demoStatement(f.name, f.kind, f.rest), Sources: []string{f.source}}
		if utf8.RuneCountInString(out.Statement) > 300 { // memory/parse.go's bound on a statement
			continue
		}
		for _, k := range known {
			if k.subject != f.subject || k.kind != f.kind {
				continue
			}
			switch {
			case strings.EqualFold(k.rest, f.rest):
				out.SameAs = k.n
			case f.kind != "pet" && out.Supersedes == 0:
				out.Supersedes = k.n
			}
		}
		if out.SameAs != 0 {
			out.Supersedes = 0
		}
		facts = append(facts, out)
	}
	if len(facts) > 20 { // memory/parse.go's bound on one answer
		facts = facts[len(facts)-20:]
	}
	args, _ := json.Marshal(map[string]any{"facts": facts})
	return Reply{ToolCalls: []ToolCall{{Name: demoExtractTool, Arguments: string(args)}}}
}

// demoReadExtraction reads the known facts and the facts the new messages state, the last of
// each single-valued kind per subject (a later line of the batch corrects an earlier one).
func demoReadExtraction(input string) ([]demoKnown, []demoFactSay) {
	var known []demoKnown
	var said []demoFactSay
	inMessages := false
	for _, line := range strings.Split(input, "\n") {
		if strings.HasPrefix(line, "New messages:") {
			inMessages = true
			continue
		}
		if !inMessages {
			if m := demoKnownLine.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				kind, rest := demoFactKind(m[3], m[4])
				known = append(known, demoKnown{n: n, subject: m[2], name: m[3], kind: kind, rest: rest})
			}
			continue
		}
		m := demoMsgLine.FindStringSubmatch(line) // a later line of a multi-line message is not read
		if m == nil {
			continue
		}
		for _, f := range demoFactsOf(m[4]) {
			f.source, f.name, f.subject = m[1], m[2], m[3]
			said = demoKeepLast(said, f)
		}
	}
	return known, said
}

// demoKeepLast adds f, dropping an earlier fact it replaces (same subject and single-valued
// kind) or repeats.
func demoKeepLast(said []demoFactSay, f demoFactSay) []demoFactSay {
	out := said[:0]
	for _, s := range said {
		same := s.subject == f.subject && s.kind == f.kind
		if same && (f.kind != "pet" || strings.EqualFold(s.rest, f.rest)) {
			continue
		}
		out = append(out, s)
	}
	return append(out, f)
}

// demoFactsOf reads the facts of one message's words (kind and what follows the name).
func demoFactsOf(words string) []demoFactSay {
	var out []demoFactSay
	for _, s := range demoSentence.FindAllString(mentionRE.ReplaceAllString(words, " "), -1) {
		if strings.Contains(s, "?") {
			continue
		}
		if m := demoPetRE.FindStringSubmatch(s); m != nil {
			if name := demoPhrase(m[3], 3); name != "" {
				out = append(out, demoFactSay{kind: "pet", rest: "has " + strings.ToLower(m[1]) + " " + strings.ToLower(m[2]) + " named " + name})
			}
		}
		if m := demoPlaceRE.FindStringSubmatch(s); m != nil && !demoNegated(s, m[0]) {
			if place := demoPhrase(m[1], 4); place != "" {
				out = append(out, demoFactSay{kind: "place", rest: "lives in " + place})
			}
		}
		if m := demoFavRE.FindStringSubmatch(s); m != nil {
			if v := demoPhrase(m[2], 5); v != "" {
				topic := strings.ToLower(m[1])
				out = append(out, demoFactSay{kind: "favourite:" + topic, rest: "favourite " + topic + " is " + v})
			}
		}
		if m := demoJobRE.FindStringSubmatch(s); m != nil && !demoNegated(s, m[0]) {
			if job := demoPhrase(m[2], 4); job != "" {
				out = append(out, demoFactSay{kind: "job", rest: "works as " + strings.ToLower(m[1]) + " " + job})
			}
		}
		if m := demoAgeRE.FindStringSubmatch(s); m != nil && !demoNegated(s, m[0]) {
			out = append(out, demoFactSay{kind: "age", rest: "is " + m[1] + " years old"})
		}
	}
	return out
}

// demoNegated reports whether the words just before the match deny it ("I don't …" is not
// matched by the forms; "not"/"never" before "I" is).
func demoNegated(sentence, match string) bool {
	before := strings.Fields(strings.ToLower(sentence[:strings.Index(sentence, match)]))
	return len(before) > 0 && (before[len(before)-1] == "not" || before[len(before)-1] == "never")
}

// demoPhrase is the value at the start of s: at most max words, up to punctuation or a stop
// word, without a trailing article or "the".
func demoPhrase(s string, max int) string {
	var out []string
	for _, w := range strings.Fields(s) {
		clean := strings.TrimRight(w, ".,;:!?)\"'")
		if demoStopWord[strings.ToLower(clean)] || clean == "" {
			break
		}
		out = append(out, clean)
		if clean != w || len(out) == max {
			break
		}
	}
	return strings.Join(out, " ")
}

// demoStatement writes a fact about name: "NAME has a cat named Miso", "NAME's favourite …".
func demoStatement(name, kind, rest string) string {
	if strings.HasPrefix(kind, "favourite:") {
		return name + "'s " + rest
	}
	return name + " " + rest
}

// demoFactKind reads a known fact's kind back from its statement (as demoStatement wrote it),
// and what follows the name; another model's wording is kind "" (never corrected here).
func demoFactKind(name, statement string) (kind, rest string) {
	if r, ok := strings.CutPrefix(statement, name+"'s favourite "); ok {
		if topic, _, ok := strings.Cut(r, " is "); ok {
			return "favourite:" + strings.ToLower(topic), "favourite " + r
		}
	}
	rest, ok := strings.CutPrefix(statement, name+" ")
	if !ok {
		return "", statement
	}
	switch {
	case strings.HasPrefix(rest, "has ") && strings.Contains(rest, " named "):
		return "pet", rest
	case strings.HasPrefix(rest, "lives in "):
		return "place", rest
	case strings.HasPrefix(rest, "works as "):
		return "job", rest
	case demoAgeFact.MatchString(rest):
		return "age", rest
	}
	return "", rest
}

// demoRememberHeader opens the facts banter puts in a turn's prompt (memory.Render).
const demoRememberHeader = "What you remember from earlier conversations in this server"

// demoRecallStop are words too common to tie a question to a fact.
var demoRecallStop = map[string]bool{"the": true, "and": true, "you": true, "what": true, "who": true, "how": true,
	"is": true, "are": true, "was": true, "has": true, "have": true, "named": true, "name": true, "about": true,
	"does": true, "did": true, "your": true, "my": true, "do": true, "know": true, "where": true, "called": true}

// demoRecall is the remembered fact (as the prompt lists it) a question is about: the one
// sharing the most words of three letters or more with it, else "".
func demoRecall(prompt, said string) string {
	_, block, ok := strings.Cut(prompt, demoRememberHeader)
	if !ok {
		return ""
	}
	asked := map[string]bool{}
	for _, w := range words(said) {
		if w = strings.TrimSuffix(w, "'s"); len(w) >= 3 && !demoRecallStop[w] {
			asked[w] = true
		}
	}
	best, bestN := "", 0
	for _, line := range strings.Split(block, "\n")[1:] {
		item, ok := strings.CutPrefix(line, "- ")
		if !ok {
			break
		}
		statement, _, _ := strings.Cut(item, " (about ")
		n := 0
		for _, w := range words(statement) {
			if asked[strings.TrimSuffix(w, "'s")] {
				n++
			}
		}
		if n > bestN {
			best, bestN = statement, n
		}
	}
	return best
}
