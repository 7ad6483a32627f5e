package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// scriptedExtraction is the memoryLlm as the simulator plays it for the bench: it reads the
// request as banter renders it (memory/prompt.go: the known facts numbered, the new messages)
// and answers record_facts with the facts the corpus's sentence forms state, naming the known
// fact a correction supersedes and the one a repeat is the same as.
func scriptedExtraction(r openaisim.Request) openaisim.Reply {
	type fact struct {
		Subject    string   `json:"subject"`
		Statement  string   `json:"statement"`
		Sources    []string `json:"source_message_ids"`
		Supersedes int      `json:"supersedes"`
		SameAs     int      `json:"same_as"`
	}
	known := knownRE.FindAllStringSubmatch(r.LastUser, -1)
	out := []fact{}
	for _, m := range newRE.FindAllStringSubmatch(r.LastUser, -1) {
		id, name, user, text := m[1], m[2], m[3], m[4]
		statement, replaces := statementOf(name, text)
		if statement == "" {
			continue
		}
		f := fact{Subject: user, Statement: statement, Sources: []string{id}}
		for _, k := range known {
			n := 0
			fmt.Sscan(k[1], &n)
			switch {
			case k[2] != user:
			case k[3] == statement:
				f.SameAs = n
			case replaces != "" && strings.Contains(k[3], replaces):
				f.Supersedes = n
			}
		}
		if f.SameAs != 0 {
			f.Supersedes = 0
		}
		out = append(out, f)
	}
	args, _ := json.Marshal(map[string]any{"facts": out})
	return openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "record_facts", Arguments: string(args)}}}
}

var (
	knownRE = regexp.MustCompile(`(?m)^(\d+)\. \[user id (\d+), [^\]]*\] (.+)$`)
	newRE   = regexp.MustCompile(`(?m)^\[msg (\d+)\] (.+?) \(user id (\d+)\): (.+)$`)
	forms   = []struct {
		re                  *regexp.Regexp
		statement, replaces string
	}{
		{regexp.MustCompile(`^I have an? (\w+) named (\w+)$`), "%s has a $1 named $2", ""},
		{regexp.MustCompile(`^I live in (\w+)$`), "%s lives in $1", ""},
		{regexp.MustCompile(`^I moved to (\w+)$`), "%s lives in $1", " lives in "},
		{regexp.MustCompile(`^I work as an? (\w+)$`), "%s works as a $1", ""},
		{regexp.MustCompile(`^I now work as an? (\w+)$`), "%s works as a $1", " works as "},
		{regexp.MustCompile(`^my favourite food is (\w+)$`), "%s's favourite food is $1", ""},
		{regexp.MustCompile(`^I play the (\w+)$`), "%s plays the $1", ""},
	}
)

// statementOf is the fact a sentence states ("" for none) and what a correction replaces.
func statementOf(name, text string) (statement, replaces string) {
	for _, f := range forms {
		if m := f.re.FindStringSubmatchIndex(text); m != nil {
			return string(f.re.ExpandString(nil, fmt.Sprintf(f.statement, name), text, m)), f.replaces
		}
	}
	return "", ""
}

func sortLines(ls []line) {
	slices.SortStableFunc(ls, func(a, b line) int { return a.at.Compare(b.at) })
}

func sortQuestions(qs []question) {
	slices.SortStableFunc(qs, func(a, b question) int {
		if c := strings.Compare(a.guild, b.guild); c != 0 {
			return c
		}
		return strings.Compare(a.kind+a.text, b.kind+b.text)
	})
}
