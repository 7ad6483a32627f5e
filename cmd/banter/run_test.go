package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/internal/logbuf"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/sim/openai/openaitest"
)

// TestRunServesAndShutsDownGracefully runs `banter run` itself against both simulators: it logs
// in, answers a mention, serves metrics and readiness, and stops cleanly when its context ends.
// newRunWorld is a simulated Discord server with #general and alice, and a config for `banter
// run` on it (metrics on a free port, a fresh database, no coalescing window; extra appended).
func newRunWorld(t *testing.T, extra string) (dsim *discordsim.Server, ch discordsim.ChannelID, alice discordsim.UserID, cfgPath string) {
	t.Helper()
	dsim = simtest.Serve(t)
	g := dsim.CreateGuild("g")
	ch = dsim.CreateTextChannel(g, "general")
	alice = dsim.CreateUser("alice")
	dsim.AddMember(g, alice)
	return dsim, ch, alice, writeRunConfig(t, dsim, extra)
}

// writeRunConfig writes a config for `banter run` on dsim (metrics on a free port, a fresh
// database, no coalescing window; extra appended) and returns its path.
func writeRunConfig(t *testing.T, dsim *discordsim.Server, extra string) string {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "banter.yaml")
	cfg := fmt.Sprintf("discord:\n  apiUrl: %s\nmetrics:\n  listen: 127.0.0.1:0\nstore:\n  dsn: %s\nactivity:\n  replyCoalesceWindowSeconds: 0\n%s",
		dsim.APIBaseURL(), filepath.Join(dir, "data", "banter.db"), extra)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath
}

func TestRunServesAndShutsDownGracefully(t *testing.T) {
	dsim, ch, alice, cfgPath := newRunWorld(t, "")
	osim := openaitest.Serve(t)
	vars := map[string]string{"DISCORD_TOKEN": dsim.Token(), "OPENAI_BASE_URL": osim.BaseURL(), "OPENAI_API_KEY": "sk-test"}
	logs := &logbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- dispatch(ctx, env{args: []string{"run", "-config", cfgPath}, stdout: io.Discard, stderr: logs,
			getenv: func(k string) string { return vars[k] }})
	}()
	defer func() {
		cancel()
		<-done
	}()

	waitCtx, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	if err := simtest.WaitReady(waitCtx, dsim, dsim.BotID()); err != nil {
		t.Fatalf("bot never logged in: %v\n%s", err, logs.String())
	}
	m, err := dsim.Post(waitCtx, alice, ch, "hey banter, are you running?")
	if err != nil {
		t.Fatal(err)
	}
	reply, err := simtest.WaitMessage(waitCtx, dsim, simtest.From(dsim.BotID()))
	if err != nil {
		t.Fatalf("no reply: %v\n%s", err, logs.String())
	}
	if reply.ReplyTo() != m.ID {
		t.Errorf("reply references %q, want %q", reply.ReplyTo(), m.ID)
	}

	addr := metricsAddr(logs.String())
	if addr == "" {
		t.Fatalf("no metrics_listening event:\n%s", logs.String())
	}
	for path, want := range map[string]string{"/readyz": "ready", "/metrics": `banter_decisions_total{outcome="allow",pipeline="text",reason="name_address",stage="A"}`} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s = %d, lacks %q", path, resp.StatusCode, want)
		}
	}
	if strings.Contains(logs.String(), dsim.Token()) {
		t.Error("the Discord token appeared in the logs")
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not shut down")
	}
	done <- nil // for the deferred receive
	for _, ev := range []string{"banter_stopping", "banter_stopped"} {
		if !strings.Contains(logs.String(), ev) {
			t.Errorf("no %s event", ev)
		}
	}
}

// metricsAddr is the address a bot's JSON log says its metrics listen on ("" if none).
func metricsAddr(logs string) string {
	addr := ""
	for _, line := range strings.Split(logs, "\n") {
		var ev struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Msg == "metrics_listening" {
			addr = ev.Addr
		}
	}
	return addr
}

// TestRunReturnsWhenLoginFails: a rejected token ends `banter run` with an error at once; the
// background goroutines already started (config watcher, SIGHUP, metrics, pruning) are
// stopped rather than waited for forever.
func TestRunReturnsWhenLoginFails(t *testing.T) {
	dsim := simtest.Serve(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "banter.yaml")
	cfg := fmt.Sprintf("discord:\n  apiUrl: %s\nmetrics:\n  listen: 127.0.0.1:0\nstore:\n  dsn: %s\n  retentionDays: 7\n",
		dsim.APIBaseURL(), filepath.Join(dir, "banter.db"))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"DISCORD_TOKEN": "not-the-token", "OPENAI_API_KEY": "sk-test"}
	done := make(chan error, 1)
	go func() {
		done <- dispatch(context.Background(), env{args: []string{"run", "-config", cfgPath}, stdout: io.Discard,
			stderr: io.Discard, getenv: func(k string) string { return vars[k] }})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "discord: log in") {
			t.Errorf("run = %v, want a log-in error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after a failed log-in")
	}
}

// TestRunStoppedWhileLoggingIn: a stop (SIGTERM) that arrives while banter logs in (here: the
// gateway connected and says nothing) is a clean stop: run returns nil, not a failed log-in.
func TestRunStoppedWhileLoggingIn(t *testing.T) {
	dsim := simtest.Serve(t)
	dsim.SetGatewayLatency(time.Hour) // the socket opens, its Hello never comes in time
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "banter.yaml")
	cfg := fmt.Sprintf("discord:\n  apiUrl: %s\nmetrics:\n  listen: \"\"\nstore:\n  dsn: %s\n",
		dsim.APIBaseURL(), filepath.Join(dir, "banter.db"))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"DISCORD_TOKEN": dsim.Token(), "OPENAI_API_KEY": "sk-test"}
	logs := &logbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- dispatch(ctx, env{args: []string{"run", "-config", cfgPath}, stdout: io.Discard, stderr: logs,
			getenv: func(k string) string { return vars[k] }})
	}()
	waitCtx, stop := context.WithTimeout(ctx, 60*time.Second)
	defer stop()
	if _, err := simtest.WaitGateway(waitCtx, dsim, discordsim.GatewayConnected, 1); err != nil {
		t.Fatalf("never connected: %v\n%s", err, logs.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run = %v, want a clean stop\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), `"msg":"banter_stopped"`) {
		t.Errorf("no banter_stopped log:\n%s", logs.String())
	}
}

// TestRunVoiceJoinAndAnswer runs `banter run` with a voice server (DAVE on): a member in a voice
// channel types !join, the bot joins, and when the member asks it by name it hears an answer; in
// voice.mode stt_pipeline and realtime (brain, the default strategy, and native).
func TestRunVoiceJoinAndAnswer(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	for _, tt := range []struct{ name, extra, strategy string }{
		{"stt_pipeline", "", ""}, // on the default send clock (voice.sendClock: own)
		// The other send paths: one socket for every connection, and a pacer per connection.
		{"sendClock=shared", "voice:\n  sendClock: shared\n", ""},
		{"sendClock=off", "voice:\n  sendClock: off\n", ""},
		// Realtime voice, and every text call (the reply classifier included)
		// over chat completions: the conformance check then covers both APIs.
		{"realtime+chat_completions", "llm:\n  api: chat_completions\nvoice:\n  mode: realtime\n", "brain"},
		// The realtime model answers the member's forwarded audio itself.
		{"realtime_native", "voice:\n  mode: realtime\n  realtimeReplyStrategy: native\n", "native"},
		// The same two strategies on the Gemini Live API (the simulator's Gemini face).
		{"gemini_brain", geminiRealtime + "  realtimeReplyStrategy: brain\n", "gemini/brain"},
		{"gemini_native", geminiRealtime + "  realtimeReplyStrategy: native\n", "gemini/native"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runVoiceJoinAndAnswer(t, tt.extra, tt.strategy, nil)
		})
	}
}

// TestRunVoiceSeesChatImage: with images.voiceChatMinutes, the model answering a voice turn
// sees the image a member just posted in the voice channel's text chat, with who posted it.
func TestRunVoiceSeesChatImage(t *testing.T) {
	t.Parallel() // an independent end-to-end test: see "Parallel tests" in shared_test.go
	runVoiceJoinAndAnswer(t, "images:\n  voiceChatMinutes: 10\n", "", &voiceRunHooks{
		beforeSpeaking: func(ctx context.Context, dsim *discordsim.Server, vc discordsim.ChannelID, alice discordsim.UserID) {
			if _, err := dsim.Post(ctx, alice, vc, "look at this", discordsim.WithFile("chart.png", "image/png", testPNG(t))); err != nil {
				t.Fatal(err)
			}
		},
		after: func(osim *openaisim.Server) {
			for _, r := range osim.RequestsFor(openaisim.EndpointResponses) {
				if len(r.Images) == 1 && strings.Contains(r.LastUserText, "alice posted this image (chart.png)") {
					return
				}
			}
			t.Errorf("no voice generation request carried the chat image with its caption: %d responses requests", len(osim.RequestsFor(openaisim.EndpointResponses)))
		},
	})
}

// voiceRunHooks are what a voice run case adds: beforeSpeaking runs once the bot is in the
// channel, before the member speaks; after runs once the turn was answered.
type voiceRunHooks struct {
	beforeSpeaking func(ctx context.Context, dsim *discordsim.Server, vc discordsim.ChannelID, alice discordsim.UserID)
	after          func(osim *openaisim.Server)
}

// testPNG is a small opaque PNG.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// runVoiceJoinAndAnswer runs one case; strategy is the realtime strategy that must have
// answered ("": the STT pipeline).
func runVoiceJoinAndAnswer(t *testing.T, extraConfig, strategy string, hooks *voiceRunHooks) {
	v := startVoiceBanter(t, extraConfig)
	v.osim.QueueTranscripts("hey banter, what's the weather like today?")
	if hooks != nil && hooks.beforeSpeaking != nil {
		hooks.beforeSpeaking(v.ctx, v.dsim, v.vc, v.alice)
	}
	if err := v.member.PlayPCM(v.ctx, voiceQuestionPCM(t)); err != nil {
		t.Fatal(err)
	}
	if err := v.member.WaitHeard(v.ctx, string(v.dsim.BotID()), 25); err != nil {
		t.Fatalf("member heard no answer: %v\n%s", err, v.logs.String())
	}
	// The join greeting may be what was heard: wait for the answer to the turn itself
	// (realtime turns log their own event).
	spoken := `"msg":"stt_pipeline_reply_spoken"`
	if strategy != "" {
		spoken = `"msg":"realtime_reply_spoken"`
	}
	v.waitLog(t, spoken, `"turn_id"`)
	// Who answered: the realtime model (brain: voicing the generation's text; native: from the
	// member's forwarded audio), or the STT pipeline's TTS.
	// Transcription sessions (the words at pauses, voice.speculation.transcription) are the
	// STT side of every path: only conversation sessions say who answered.
	osim := v.osim
	commits, tts, conversation := 0, len(osim.RequestsFor(openaisim.EndpointSpeech)), 0
	for _, e := range osim.RealtimeEvents() {
		if e.Transcription {
			continue
		}
		conversation++
		if e.Type == "input_audio_buffer.commit" {
			commits++
		}
	}
	if provider, strat, ok := strings.Cut(strategy, "/"); ok && provider == "gemini" {
		checkGeminiAnswered(t, v, strat, conversation, tts)
		return
	}
	requested := slices.ContainsFunc(strings.Split(v.logs.String(), "\n"), func(l string) bool {
		return strings.Contains(l, `"msg":"realtime_reply_requested"`) && strings.Contains(l, `"strategy":"`+strategy+`"`)
	})
	switch {
	case strategy == "" && (tts == 0 || conversation != 0),
		strategy == "native" && (!requested || commits != 1 || tts != 0),
		strategy == "brain" && (!requested || commits != 0 || tts != 0):
		t.Errorf("answered by the wrong path for %q: %d TTS requests, %d realtime events, %d commits, requested %v",
			strategy, tts, conversation, commits, requested)
	}
	if hooks != nil && hooks.after != nil {
		hooks.after(osim)
	}
}

// TestRunTwoProviders: with providers: in the config, each model slot calls its own endpoint.
// The reply model stays on the default provider (the first OpenAI simulator, Responses API)
// and asks for a lookup; replyFollowupLlm names a second provider (another simulator on its own
// port, speaking chat completions with its own key variable), which writes the follow-up pass
// from the lookup's result. A reply without a lookup calls the reply model's provider only.
func TestRunTwoProviders(t *testing.T) {
	dsim := simtest.Serve(t)
	primary := openaitest.Serve(t, openaisim.WithRules(openaisim.Rule{
		Match: openaisim.Match{InputPattern: "what did we say", Tool: "memory_lookup"},
		Reply: openaisim.Reply{ToolCalls: []openaisim.ToolCall{{Name: "memory_lookup", Arguments: `{"query":"model"}`}}}}))
	second := openaitest.Serve(t, openaisim.WithRules(openaisim.Rule{
		Match: openaisim.Match{PromptPattern: `memory_lookup\("model"\)`},
		Reply: openaisim.Reply{Text: "The follow-up pass wrote this."}}))
	g := dsim.CreateGuild("g")
	ch := dsim.CreateTextChannel(g, "general")
	alice := dsim.CreateUser("alice")
	dsim.AddMember(g, alice)

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "banter.yaml")
	cfg := fmt.Sprintf(`discord:
  apiUrl: %s
metrics:
  listen: ""
store:
  dsn: %s
activity:
  replyCoalesceWindowSeconds: 0
providers:
  second:
    baseUrl: %s
    api: chat_completions
    apiKeyEnv: SECOND_PROVIDER_KEY
replyFollowupLlm:
  enabled: true
  provider: second
  model: review-model
voice:
  enabled: false
`, dsim.APIBaseURL(), filepath.Join(dir, "data", "banter.db"), second.BaseURL())
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"DISCORD_TOKEN": dsim.Token(), "OPENAI_BASE_URL": primary.BaseURL(),
		"OPENAI_API_KEY": "sk-test", "SECOND_PROVIDER_KEY": "sk-second"}
	logs := &logbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- dispatch(ctx, env{args: []string{"run", "-config", cfgPath}, stdout: io.Discard, stderr: logs,
			getenv: func(k string) string { return vars[k] }})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	waitCtx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	if err := simtest.WaitReady(waitCtx, dsim, dsim.BotID()); err != nil {
		t.Fatalf("bot never logged in: %v\n%s", err, logs.String())
	}
	if _, err := dsim.Post(waitCtx, alice, ch, "hey banter, which model wrote this?"); err != nil {
		t.Fatal(err)
	}
	if _, err := simtest.WaitMessage(waitCtx, dsim, simtest.From(dsim.BotID())); err != nil {
		t.Fatalf("no reply: %v\n%s", err, logs.String())
	}
	if reqs := primary.Requests(); len(reqs) != 1 || reqs[0].Endpoint != openaisim.EndpointResponses || reqs[0].Model != "gpt-5-mini" {
		t.Errorf("default provider got %d requests %+v; want the one reply on /responses with gpt-5-mini", len(reqs), endpointsOf(reqs))
	}
	if n := len(second.Requests()); n != 0 {
		t.Errorf("second provider got %d requests for a reply without lookups, want none", n)
	}
	if _, err := dsim.Post(waitCtx, alice, ch, "banter, what did we say about models?"); err != nil {
		t.Fatal(err)
	}
	reply, err := simtest.WaitMessage(waitCtx, dsim, func(m discordsim.Message) bool {
		return m.Author == dsim.BotID() && strings.Contains(m.Content, "follow-up pass")
	})
	if err != nil {
		t.Fatalf("no follow-up reply: %v\n%s", err, logs.String())
	}
	if reqs := primary.Requests(); len(reqs) != 2 || reqs[1].Endpoint != openaisim.EndpointResponses || reqs[1].Model != "gpt-5-mini" {
		t.Errorf("default provider got %d requests %+v; want the second reply (asking for a lookup) on /responses", len(reqs), endpointsOf(reqs))
	}
	review := second.Requests()
	if len(review) != 1 || review[0].Endpoint != openaisim.EndpointChatCompletions || review[0].Model != "review-model" {
		t.Errorf("second provider got %d requests %+v; want the follow-up pass on chat completions with review-model", len(review), endpointsOf(review))
	}
	if reply.Content != "The follow-up pass wrote this." {
		t.Errorf("sent %q, want the follow-up pass's answer", reply.Content)
	}
}

func endpointsOf(rs []openaisim.Recorded) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%v %s", r.Endpoint, r.Model))
	}
	return out
}

// geminiRealtime is the configuration of realtime voice on the Gemini Live API, served by the
// OpenAI simulator's Gemini face (launchVoiceBanter fills $GEMINI_URL; GEMINI_API_KEY is set).
const geminiRealtime = `providers:
  gemini:
    kind: gemini
    baseUrl: $GEMINI_URL
voice:
  mode: realtime
  realtime:
    provider: gemini
`

// checkGeminiAnswered checks that Gemini answered the turn, in the strategy's way: native from
// the member's audio as one activity, brain by voicing a text turn; neither OpenAI's realtime
// API nor the TTS was used.
func checkGeminiAnswered(t *testing.T, v *voiceBanter, strategy string, openaiRealtime, tts int) {
	t.Helper()
	count, heard := map[string]int{}, map[string]int{} // the conversation's messages, the hearing's
	listening := map[string]bool{}                     // Gemini transcription connections
	for _, m := range v.osim.GeminiMessages() {
		if m.Type == "setup" && strings.Contains(string(m.Raw), "You only listen") {
			listening[m.Session] = true
		}
		if listening[m.Session] {
			heard[m.Type]++
		} else {
			count[m.Type]++
		}
	}
	// Stage A decided on Gemini's own transcription: OpenAI's was never asked.
	openaiHeard := len(v.osim.RequestsFor(openaisim.EndpointTranscriptions))
	for _, e := range v.osim.RealtimeEvents() {
		if e.Transcription {
			openaiHeard++
		}
	}
	if heard["realtimeInput.activityEnd"] == 0 || openaiHeard != 0 {
		t.Errorf("hearing: %v on Gemini transcription connections, %d OpenAI transcriptions; want Gemini's only", heard, openaiHeard)
	}
	requested := slices.ContainsFunc(strings.Split(v.logs.String(), "\n"), func(l string) bool {
		return strings.Contains(l, `"msg":"realtime_reply_requested"`) && strings.Contains(l, `"provider":"gemini"`) &&
			strings.Contains(l, `"strategy":"`+strategy+`"`) && strings.Contains(l, `"turn_id"`)
	})
	wrong := !requested || openaiRealtime != 0 || tts != 0 || len(v.osim.RequestsFor(openaisim.EndpointGeminiResponse)) == 0
	switch strategy {
	case "native":
		wrong = wrong || count["realtimeInput.activityEnd"] == 0 || count["realtimeInput.audio"] == 0
	case "brain":
		wrong = wrong || count["clientContent"] == 0 || count["realtimeInput.audio"] != 0
	}
	if wrong {
		t.Errorf("answered by the wrong path for gemini/%s: requested %v, Gemini messages %v, %d OpenAI realtime events, %d TTS requests",
			strategy, requested, count, openaiRealtime, tts)
	}
	if strategy == "brain" {
		checkGeminiSaidText(t, v)
	}
}

// checkGeminiSaidText: in brain, what Gemini said (its output transcription, logged
// realtime_transcripts) is the text banter asked it to read aloud, not the request around it.
func checkGeminiSaidText(t *testing.T, v *voiceBanter) {
	t.Helper()
	var asked []string
	for _, m := range v.osim.GeminiMessages() {
		var cc struct {
			ClientContent struct {
				Turns []struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"turns"`
				TurnComplete bool `json:"turnComplete"`
			} `json:"clientContent"`
		}
		if m.Type != "clientContent" || json.Unmarshal(m.Raw, &cc) != nil || !cc.ClientContent.TurnComplete {
			continue
		}
		for _, turn := range cc.ClientContent.Turns {
			for _, p := range turn.Parts {
				if _, text, ok := strings.Cut(p.Text, "\nText:\n"); ok {
					asked = append(asked, strings.TrimSpace(text))
				}
			}
		}
	}
	var said []string
	for _, l := range strings.Split(v.logs.String(), "\n") {
		var e struct{ Msg, Said string }
		if json.Unmarshal([]byte(l), &e) == nil && e.Msg == "realtime_transcripts" {
			said = append(said, e.Said)
		}
	}
	if len(asked) == 0 || !slices.Equal(asked, said) {
		t.Errorf("Gemini said %q; asked to read aloud %q", said, asked)
	}
}
