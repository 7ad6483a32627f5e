package openaisim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/banterbot/banter/decision"
)

// chatPrompt is a text-pipeline request as banter builds it (text/prompt.go):
// a context block naming the message to answer, guidance in the instructions.
func chatPrompt(guidance, author, said string) (string, string) {
	instr := "You are banter, a witty regular.\n\nYour name is banter.\n\nTo answer, call send_discord_message.\n\n" + guidance
	input := "Channel: #general\nTime now: 2026-01-01 10:00 UTC\n\nParticipants:\n- " + author +
		" (user id 1): no persona on file\n- banter (you)\n\nRecent conversation in the channel (oldest first):\n" +
		"[msg 111 · 2m ago] carol: earlier words about lunch\n" +
		"[msg 222 · just now] " + author + ": " + said + "\n\nMessage to answer: msg 222 from " + author + ".\n"
	return instr, input
}

func demoGenerate(t *testing.T, c openai.Client, instr, input string, tools bool) *responses.Response {
	t.Helper()
	p := responses.ResponseNewParams{
		Model:        "gpt-5-mini",
		Instructions: openai.String(instr),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String(input)},
	}
	if tools {
		p.Tools = []responses.ToolUnionParam{sendTool()}
	}
	resp, err := c.Responses.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestDemoChatReadsTheMessage: the chat reply answers the named message,
// quoting its words, never the prompt; the same request gets the same answer.
func TestDemoChatReadsTheMessage(t *testing.T) {
	s := serve(t, WithRules(DemoRules()...))
	c := newClient(s)
	forced := strings.Join(decision.ForceReplyLines(decision.Decision{Force: true, Reason: decision.ReasonDirectMention}, "dana"), "\n")
	instr, input := chatPrompt(forced, "dana", "<@999> what should we cook tonight?")
	var first string
	for range 2 {
		resp := demoGenerate(t, c, instr, input, true)
		var call *responses.ResponseFunctionToolCall
		for _, it := range resp.Output {
			if it.Type == "function_call" {
				fc := it.AsFunctionCall()
				call = &fc
			}
		}
		if call == nil || call.Name != "send_discord_message" {
			t.Fatalf("no send_discord_message call: %+v", resp.Output)
		}
		var args struct {
			Mode   string  `json:"mode"`
			Target *string `json:"target_message_id"`
			Text   string  `json:"text"`
		}
		if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
			t.Fatal(err)
		}
		if args.Mode != "reply" || args.Target == nil || *args.Target != "222" {
			t.Errorf("args %+v: want a reply to msg 222", args)
		}
		if !strings.Contains(args.Text, "what should we cook tonight") || !strings.Contains(args.Text, "dana") {
			t.Errorf("reply %q does not answer dana's message", args.Text)
		}
		for _, prompt := range []string{"Channel:", "Participants", "lunch", "msg 222", "<@999>", "You said"} {
			if strings.Contains(args.Text, prompt) {
				t.Errorf("reply %q repeats the prompt (%q)", args.Text, prompt)
			}
		}
		if first != "" && args.Text != first {
			t.Errorf("not deterministic: %q then %q", first, args.Text)
		}
		first = args.Text
	}
}

// TestDemoChatQuotesOnlyTheMembersWords: what banter adds to a line for the images its
// message shows ("[image 1: cat.png]", text/images.go) is not the member's question: the
// reply never quotes it.
func TestDemoChatQuotesOnlyTheMembersWords(t *testing.T) {
	s := serve(t, WithRules(DemoRules()...))
	c := newClient(s)
	forced := strings.Join(decision.ForceReplyLines(decision.Decision{Force: true, Reason: decision.ReasonDirectMention}, "dana"), "\n")
	for _, note := range []string{" [image 1: red.png]", " [image unavailable]", " [image not shown: big.png]"} {
		instr, input := chatPrompt(forced, "dana", "<@999> what colour is this?"+note)
		args := sendArgs(t, demoGenerate(t, c, instr, input, true))
		if !strings.Contains(args, `\"what colour is this?\"`) || strings.Contains(args, "image") {
			t.Errorf("%q: reply %s, want the question quoted without the image note", note, args)
		}
	}
}

// sendArgs returns the arguments of the response's send_discord_message call.
func sendArgs(t *testing.T, resp *responses.Response) string {
	t.Helper()
	for _, it := range resp.Output {
		if it.Type == "function_call" && it.AsFunctionCall().Name == "send_discord_message" {
			return it.AsFunctionCall().Arguments
		}
	}
	t.Fatalf("no send_discord_message call: %+v", resp.Output)
	return ""
}

// TestDemoEagernessBands: for unaddressed messages the demo answers more
// often the higher the eagerness band banter's guidance expresses, never at
// 0 and always when forced.
func TestDemoEagernessBands(t *testing.T) {
	s := serve(t, WithRules(DemoRules()...))
	c := newClient(s)
	msgs := make([]string, 24)
	for i := range msgs {
		msgs[i] = fmt.Sprintf("message number %d about the weekend plans", i)
	}
	answered := func(guidance string) int {
		n := 0
		for _, m := range msgs {
			instr, input := chatPrompt(guidance+"\n"+decision.SkipInstruction, "erin", m)
			resp := demoGenerate(t, c, instr, input, true)
			if strings.TrimSpace(resp.OutputText()) != SkipText {
				n++
			}
		}
		return n
	}
	prev := -1
	for _, level := range []int{0, 10, 30, 50, 70, 90} {
		n := answered(decision.EagernessGuidance(level))
		if level == 0 && n != 0 {
			t.Errorf("eagerness 0 answered %d of %d", n, len(msgs))
		}
		if n < prev {
			t.Errorf("eagerness %d answered %d, fewer than the band below (%d)", level, n, prev)
		}
		prev = n
	}
	if prev <= len(msgs)/2 {
		t.Errorf("eagerness 90 answered only %d of %d", prev, len(msgs))
	}
	forced := strings.Join(decision.ForceReplyLines(decision.Decision{Force: true, Reason: decision.ReasonNameAddress}, "erin"), "\n")
	if n := answered(forced); n != len(msgs) {
		t.Errorf("forced turns answered %d of %d", n, len(msgs))
	}
}

// TestDemoVoiceAndClassifier: spoken replies answer the last line by name, without quotes;
// the YES/NO classifier follows "Eagerness: N/100" and what kind of line it is asked about.
func TestDemoVoiceAndClassifier(t *testing.T) {
	s := serve(t, WithRules(DemoRules()...))
	c := newClient(s)
	resp := demoGenerate(t, c, "You are banter.\nYou are talking in a Discord voice channel.\nThe user called you by name. You must reply to them.",
		"frank: banter, how is the weather up there?", false)
	out := resp.OutputText()
	if !strings.Contains(out, "frank") || !strings.Contains(out, "how is the weather up there") || strings.Contains(out, "\"") {
		t.Errorf("spoken reply %q", out)
	}
	for _, tc := range []struct {
		said  string
		eager int
		want  string
	}{
		{"anyone know a good pizza place?", 0, "NO"},
		{"anyone know a good pizza place?", 30, "NO"},
		{"anyone know a good pizza place?", 50, "YES"},
		{"what's everyone doing this weekend?", 50, "NO"},
		{"what's everyone doing this weekend?", 70, "YES"},
		{"i just finished my first marathon", 50, "NO"},
		{"i just finished my first marathon", 70, "YES"},
		{"i'm back", 70, "NO"},
		{"i'm back", 90, "YES"},
		{"lol", 100, "NO"},
		{"gina, can you hear me?", 100, "NO"},
		{DemoPlaceholderPrefix + ", 1.2 s)", 50, "NO"},
		{DemoPlaceholderPrefix + ", 1.2 s)", 90, "YES"},
	} {
		prompt := fmt.Sprintf("Participants: frank, gina\nEagerness: %d/100\nLatest utterance, from frank: \"%s\"\nShould banter respond? Answer YES or NO.", tc.eager, tc.said)
		if got := demoGenerate(t, c, "You are the turn-taking judge for banter, a voice assistant.", prompt, false).OutputText(); got != tc.want {
			t.Errorf("eagerness %d, %q: %s, want %s", tc.eager, tc.said, got, tc.want)
		}
	}
}

// TestDemoReplies: what the demo brain says to each kind of line, by name, in the member's
// words turned round, never quoting a statement back.
func TestDemoReplies(t *testing.T) {
	for _, tc := range []struct{ said, want string }{
		{"<@1> hi!", "Hey alice!"},
		{"hey banter", "alice!"},
		{"<@1> i'm back", "Welcome back, alice!"},
		{"<@1> brb", "alice"},
		{"thanks banter", "Any time, alice."},
		{"banter, tell me a joke", "tell you a joke"},
		{"<@1> can you sing us a song?", "sing you all a song"},
		{"<@1> what should we cook tonight?", "\"what should we cook tonight?\""},
		{"<@1> really? tell me more", "\"really?\""},
		{"banter what's up? lol", "\"what's up?\""},
		{"banter, are you a real person?", "yes, alice"},
		{"hey banter, are you there?", "Yes, I think so, alice"},
		{"banter, i just finished my first marathon", "alice"},
	} {
		got := demoAnswer("alice", tc.said, "banter", false)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%q: %q, want %q in it", tc.said, got, tc.want)
		}
		if strings.Contains(got, "first marathon") || strings.Contains(got, "you:") || strings.Contains(got, "more?") {
			t.Errorf("%q: %q quotes a statement back", tc.said, got)
		}
	}
}

// TestDemoTranscription: a queued transcript (the caption box) is what the
// next utterance says; other audio gets the labelled placeholder.
func TestDemoTranscription(t *testing.T) {
	s := serve(t, WithRules(DemoRules()...))
	wav := EncodeWAV(Synthesize("hello there", "alloy", 1), 24000)
	transcribe := func(wav []byte) string { return transcribe(t, s, wav) }
	s.QueueTranscripts("hey banter, sing something")
	if got := transcribe(wav); got != "hey banter, sing something" {
		t.Errorf("captioned utterance transcribed %q", got)
	}
	if got := transcribe(wav); !strings.HasPrefix(got, DemoPlaceholderPrefix) {
		t.Errorf("uncaptioned utterance transcribed %q, want the placeholder", got)
	}
}

// TestQueuedTranscriptHeardAgainWhenContinued: audio that continues the audio which took a
// queued transcript (a client transcribed the words so far at a pause, then the whole
// utterance) is heard the same way; other audio is not, and a queued transcript still goes
// to the next request first.
func TestQueuedTranscriptHeardAgainWhenContinued(t *testing.T) {
	s := serve(t, WithRules(DemoRules()...))
	words := Synthesize("hey banter, tell me", "alloy", 1)
	more := append(slices.Clone(words), Synthesize("something fun", "alloy", 1)...)
	other := Synthesize("something else entirely", "echo", 1)
	s.QueueTranscripts("hey banter, tell me something fun")
	for i, c := range []struct {
		pcm  []byte
		want string
	}{
		{words, "hey banter, tell me something fun"},                  // takes the queued transcript
		{more, "hey banter, tell me something fun"},                   // the same speech, continued
		{other, DemoPlaceholderPrefix},                                // other speech
		{append(slices.Clone(other), more...), DemoPlaceholderPrefix}, // does not begin with it
	} {
		if got := transcribe(t, s, EncodeWAV(c.pcm, 24000)); !strings.HasPrefix(got, c.want) {
			t.Errorf("request %d transcribed %q, want %q", i, got, c.want)
		}
	}
	s.QueueTranscripts("first", "second")
	if got := transcribe(t, s, EncodeWAV(words, 24000)); got != "first" {
		t.Errorf("got %q, want the first queued transcript", got)
	}
	if got := transcribe(t, s, EncodeWAV(more, 24000)); got != "second" {
		t.Errorf("continued audio with a transcript queued got %q, want the queued one", got)
	}
}

// transcribe posts a WAV to the simulator's transcription endpoint and returns the text.
func transcribe(t *testing.T, s *Server, wav []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("model", "gpt-4o-mini-transcribe")
	fw, _ := mw.CreateFormFile("file", "a.wav")
	_, _ = fw.Write(wav)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", s.BaseURL()+"/audio/transcriptions", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct{ Text string }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return out.Text
}

// FuzzDemoBrain: whatever a request says, every demo rule answers without panicking, and a
// chat reply's tool call carries valid JSON.
func FuzzDemoBrain(f *testing.F) {
	instr, input := chatPrompt("You must reply to them.\n[SKIP]", "gil", "hi banter?")
	f.Add(input, instr)
	f.Add("Message to answer: msg 1 from x.\n[msg 1 · ] x: ", "Eagerness: 101/100\nLatest utterance, from a: \"\"")
	f.Add("frank: (speech without a caption, 1.0 s)", "You are very eager")
	f.Add("Draft reply to review:\n", "number from 0 to 1\nMessage to judge, from a:\n?\nThe name appears as")
	f.Fuzz(func(t *testing.T, lastUser, prompt string) {
		req := Request{Endpoint: EndpointResponses, LastUser: lastUser, Prompt: prompt, Tools: []string{"send_discord_message"}}
		for _, r := range DemoRules() {
			rep := r.Respond(req)
			for _, c := range rep.ToolCalls {
				if !json.Valid([]byte(c.Arguments)) {
					t.Errorf("%s: tool call arguments %q are not JSON", r.Name, c.Arguments)
				}
			}
		}
	})
}
