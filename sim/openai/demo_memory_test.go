package openaisim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// extractionInput renders a batch as banter's memory package does (memory/prompt.go).
func extractionInput(known []string, msgs ...string) string {
	var b strings.Builder
	b.WriteString("Known facts:\n")
	if len(known) == 0 {
		b.WriteString("(none)\n")
	}
	for _, k := range known {
		b.WriteString(k + "\n")
	}
	b.WriteString("\nNew messages:\n")
	for _, m := range msgs {
		b.WriteString(m + "\n")
	}
	return b.String()
}

type demoFact struct {
	Subject    string   `json:"subject"`
	Statement  string   `json:"statement"`
	Sources    []string `json:"source_message_ids"`
	Supersedes int      `json:"supersedes"`
	SameAs     int      `json:"same_as"`
}

func demoFacts(t *testing.T, rep Reply) []demoFact {
	t.Helper()
	if len(rep.ToolCalls) != 1 || rep.ToolCalls[0].Name != "record_facts" {
		t.Fatalf("reply %+v: want one record_facts call", rep)
	}
	var a struct {
		Facts []demoFact `json:"facts"`
	}
	if err := json.Unmarshal([]byte(rep.ToolCalls[0].Arguments), &a); err != nil || a.Facts == nil {
		t.Fatalf("arguments %s: %v (facts %v)", rep.ToolCalls[0].Arguments, err, a.Facts)
	}
	return a.Facts
}

func TestDemoExtract(t *testing.T) {
	lyon := "1. [user id 11, sam] sam lives in Lyon"
	miso := "2. [user id 11, sam] sam has a cat named Miso"
	cases := []struct {
		name  string
		known []string
		msgs  []string
		want  []demoFact
	}{
		{"a pet", nil, []string{"[msg 5] sam (user id 11): I have a cat named Miso"},
			[]demoFact{{"11", "sam has a cat named Miso", []string{"5"}, 0, 0}}},
		{"place, age, job, favourite, with a mention", nil, []string{
			"[msg 5] sam (user id 11): <@99> I live in Lyon, near the river.",
			"[msg 6] alice (user id 12): i'm 34 years old and I work as a nurse at the clinic",
			"[msg 7] bob (user id 13): my favourite colour is dark green!"},
			[]demoFact{{"11", "sam lives in Lyon", []string{"5"}, 0, 0},
				{"12", "alice works as a nurse", []string{"6"}, 0, 0},
				{"12", "alice is 34 years old", []string{"6"}, 0, 0},
				{"13", "bob's favourite colour is dark green", []string{"7"}, 0, 0}}},
		{"a correction supersedes the numbered fact", []string{lyon, miso}, []string{"[msg 8] sam (user id 11): actually I moved to Paris"},
			[]demoFact{{"11", "sam lives in Paris", []string{"8"}, 1, 0}}},
		{"questions, negations, other people, small talk", []string{lyon}, []string{
			"[msg 5] sam (user id 11): do I live in Lyon?",
			"[msg 6] sam (user id 11): lol same",
			"[msg 7] alice (user id 12): sam has a cat named Miso",
			"[msg 8] bob (user id 13): I used to live in Rome, and I don't work as a chef"},
			[]demoFact{}},
		{"a repeat is same_as", []string{lyon, miso}, []string{"[msg 9] sam (user id 11): I have a cat named miso."},
			[]demoFact{{"11", "sam has a cat named miso", []string{"9"}, 0, 2}}},
		{"the last of a kind in the batch wins", nil, []string{
			"[msg 5] sam (user id 11): I live in Lyon", "[msg 6] sam (user id 11): sorry, I moved to Nice last month"},
			[]demoFact{{"11", "sam lives in Nice", []string{"6"}, 0, 0}}},
		{"a fact of another subject is not corrected", []string{lyon}, []string{"[msg 5] alice (user id 12): I live in Oslo"},
			[]demoFact{{"12", "alice lives in Oslo", []string{"5"}, 0, 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := extractionInput(c.known, c.msgs...)
			got := demoFacts(t, demoExtract(Request{LastUser: in, Tools: []string{"record_facts"}}))
			if len(got) != len(c.want) {
				t.Fatalf("facts %+v, want %+v", got, c.want)
			}
			for i := range got {
				g, w := got[i], c.want[i]
				if g.Subject != w.Subject || g.Statement != w.Statement || strings.Join(g.Sources, ",") != strings.Join(w.Sources, ",") ||
					g.Supersedes != w.Supersedes || g.SameAs != w.SameAs {
					t.Errorf("fact %d = %+v, want %+v", i+1, g, w)
				}
			}
			if again := demoExtract(Request{LastUser: in}); again.ToolCalls[0].Arguments != demoExtract(Request{LastUser: in}).ToolCalls[0].Arguments {
				t.Errorf("not deterministic: %s", again.ToolCalls[0].Arguments)
			}
		})
	}
}

// TestDemoExtractOverTheWire: a Responses request offering record_facts (as banter's memory
// slot sends it) gets the record_facts call from the demo rules, before any other rule reads
// the words (a message asking "Answer YES or NO" is still an extraction).
func TestDemoExtractOverTheWire(t *testing.T) {
	s := serve(t, WithRules(DemoRules()...))
	c := newClient(s)
	tool := responses.ToolParamOfFunction("record_facts", map[string]any{"type": "object"}, true)
	for _, tc := range []struct{ said, want string }{
		{"I have a dog named Rex. Answer YES or NO", `"statement":"dana has a dog named Rex"`},
		{"what a day", `{"facts":[]}`},
	} {
		resp, err := c.Responses.New(context.Background(), responses.ResponseNewParams{
			Model:        "gpt-5-nano",
			Instructions: openai.String("You keep the long-term memory of a Discord companion bot."),
			Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String(extractionInput(nil, "[msg 42] dana (user id 7): "+tc.said))},
			Tools:        []responses.ToolUnionParam{tool},
		})
		if err != nil {
			t.Fatal(err)
		}
		args := ""
		for _, it := range resp.Output {
			if it.Type == "function_call" && it.AsFunctionCall().Name == "record_facts" {
				args = it.AsFunctionCall().Arguments
			}
		}
		if !strings.Contains(args, tc.want) {
			t.Errorf("%q: record_facts arguments %q, want %s", tc.said, args, tc.want)
		}
	}
}

// FuzzDemoExtract: whatever the request holds, the demo brain answers one record_facts call
// whose arguments are a JSON object with a facts list, each fact sourced from a message line.
func FuzzDemoExtract(f *testing.F) {
	f.Add(extractionInput([]string{"1. [user id 11, sam] sam lives in Lyon"}, "[msg 8] sam (user id 11): actually I moved to Paris"))
	f.Add(extractionInput(nil, "[msg 5] sam (user id 11): I have a cat named Miso", "second line I live in Rome"))
	f.Add("New messages:\n[msg ] x (user id ): I'm 999 years old")
	f.Add("1. [user id a, b, c] b's favourite  is \nNew messages:\n[msg 1] b (user id a): my favourite x is")
	f.Fuzz(func(t *testing.T, input string) {
		for _, fact := range demoFacts(t, demoExtract(Request{LastUser: input})) {
			if !strings.Contains(input, "[msg "+strings.Join(fact.Sources, "")+"] ") || len(fact.Sources) != 1 {
				t.Errorf("fact %+v: its source is not a message line of %q", fact, input)
			}
			if strings.TrimSpace(fact.Statement) == "" || utf8.RuneCountInString(fact.Statement) > 300 {
				t.Errorf("fact %+v: empty or too long a statement", fact)
			}
		}
	})
}

// TestDemoChatRecalls: a question about a fact the chat prompt says the bot remembers is
// answered with it; a question about something else, or a remark, is answered as before.
func TestDemoChatRecalls(t *testing.T) {
	memory := "\n\nWhat you remember from earlier conversations in this server (what people told you; it may be out of date):\n" +
		"- alice lives in Lyon (about alice, today)\n- alice has a cat named Miso (about alice, 2 days ago)\n\n"
	forced := "You must reply to them."
	for _, c := range []struct{ said, want, not string }{
		{"<@999> what is the name of alice's cat?", "bob, from what I remember: alice has a cat named Miso.", ""},
		{"<@999> where does alice live?", "from what I remember: alice lives in Lyon", ""},
		{"<@999> what should we cook tonight?", "", "remember"},
		{"<@999> my cat is called Rex", "", "remember"},
	} {
		instr, input := chatPrompt(forced, "bob", c.said)
		rep := demoChat(Request{LastUser: input + memory, Prompt: instr + "\n" + input + memory, Tools: []string{"send_discord_message"}})
		if len(rep.ToolCalls) != 1 {
			t.Fatalf("%q: %+v", c.said, rep)
		}
		var args struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(rep.ToolCalls[0].Arguments), &args); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(args.Text, c.want) || (c.not != "" && strings.Contains(args.Text, c.not)) {
			t.Errorf("%q: reply %q, want %q without %q", c.said, args.Text, c.want, c.not)
		}
	}
}
