package voice_test

import (
	"strings"
	"testing"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/simtest"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

// streamed returns the streamed generation requests (the replies; the
// classifier's calls are not streamed).
func (w *world) streamed() []openaisim.Recorded {
	var out []openaisim.Recorded
	for _, r := range w.osim.RequestsFor(openaisim.EndpointResponses) {
		if r.Stream {
			out = append(out, r)
		}
	}
	return out
}

// TestPromptShowsPersonas: the voice prompt lists the members in the channel
// with their /persona descriptions from the store, as the text prompt does;
// a member without one is said to have none.
func TestPromptShowsPersonas(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	w := newWorldWith(t, worldOptions{personas: st}, nil, genRule("Sunny, Ali."))
	if err := st.SavePersona(t.Context(), store.UserPersona{UserID: string(w.users["alice"]), PreferredName: "Ali",
		Pronouns: "she/her", Description: "plays the cello in a quartet"}); err != nil {
		t.Fatal(err)
	}
	alice := w.member("alice")
	w.member("bob")
	w.join()
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)
	gens := w.streamed()
	if len(gens) != 1 {
		t.Fatalf("%d generations", len(gens))
	}
	for _, want := range []string{"- alice: goes by Ali; pronouns she/her; about: plays the cello in a quartet", "- bob: no persona on file"} {
		if !strings.Contains(gens[0].Instructions, want) {
			t.Errorf("instructions lack %q:\n%s", want, gens[0].Instructions)
		}
	}
}

// TestPromptFitsTokenBudget: the conversation in a voice prompt is cut to
// context.tokenBudget, oldest lines first, each line to
// context.maxCharsPerMessage; the turn being answered always stays.
func TestPromptFitsTokenBudget(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *config.Config) { c.Voice.ReplyEagerness = 0 }, genRule("Sunny."))
	// Below what validation allows in a file, to keep the test short; read live.
	w.cfg.Context.TokenBudget, w.cfg.Context.MaxCharsPerMessage = 300, 200
	alice, bob := w.member("alice"), w.member("bob")
	w.join()
	remarks := []string{"first remark", "second remark", "third remark", "fourth remark"}
	for i, r := range remarks {
		w.osim.QueueTranscripts(r + " " + strings.Repeat("blah ", 80))
		w.play(bob, "mike-hear-me")
		w.waitLogs(i+1, `"msg":"stt_pipeline_reply_denied"`) // not addressed, eagerness 0: only heard
	}
	w.osim.QueueTranscripts("hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)
	gens := w.streamed()
	if len(gens) != 1 {
		t.Fatalf("%d generations", len(gens))
	}
	p := gens[0].Prompt
	if strings.Contains(p, "first remark") || !strings.Contains(p, "fourth remark") || !strings.Contains(p, "what's the weather") {
		t.Errorf("want the oldest remark dropped, the latest and the question kept:\n%s", p)
	}
	if strings.Count(p, "blah") > 3*38 || !strings.Contains(p, "…") {
		t.Errorf("remarks not cut to maxCharsPerMessage:\n%s", p)
	}
	if n := len(p) / 4; n > 300 {
		t.Errorf("prompt of about %d tokens, budget 300:\n%s", n, p)
	}
}

// TestTranscriptFilters: a blocked member's speech is not even decoded, let alone transcribed,
// and a transcript with a ban word never reaches the timeline, the log
// channel or a prompt (permissions.blockedUserIds, safety.banWords).
func TestTranscriptFilters(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *config.Config) { c.Safety.BanWords = []string{"pineapple"} }, genRule("Sunny all day."))
	w.cfg.Permissions.BlockedUserIDs = []string{string(w.users["bob"])}
	w.cfg.Voice.LogChannelID = string(w.text)
	alice, bob := w.member("alice"), w.member("bob")
	w.join()
	w.play(bob, "hey-banter-weather")
	w.waitLog(`"msg":"voice_transcript_dropped"`, `"reason":"blocked_user"`)
	// Bob's talk spurt was followed and dropped without decoding a packet of it.
	if n := metricValue(t, w.reg, "banter_audio_packets_total", "accepted"); n != 0 {
		t.Errorf("%v packets of the blocked member went to a jitter buffer, want none decoded", n)
	}
	w.osim.QueueTranscripts("hey banter, do you like Pineapple on pizza?", "hey banter, what's the weather like today?")
	w.play(alice, "hey-banter-weather")
	w.waitLog(`"msg":"voice_transcript_dropped"`, `"reason":"ban_word"`)
	w.play(alice, "hey-banter-weather")
	w.waitLog(`"msg":"stt_pipeline_reply_spoken"`)
	if _, err := simtest.WaitMessage(w.ctx, w.dsim, func(m discordsim.Message) bool {
		return m.ChannelID == w.text && strings.Contains(m.Content, "Sunny all day.")
	}); err != nil {
		t.Fatalf("log channel: %v", err)
	}
	if n := len(w.osim.RequestsFor(openaisim.EndpointTranscriptions)); n != 2 {
		t.Errorf("%d transcriptions, want alice's 2 (bob is blocked)", n)
	}
	gens := w.streamed()
	if len(gens) != 1 || strings.Contains(strings.ToLower(gens[0].Prompt), "pineapple") {
		t.Errorf("generations %+v: want one, without the ban word", gens)
	}
	for _, m := range w.dsim.Messages(w.text) {
		if strings.Contains(strings.ToLower(m.Content), "pineapple") {
			t.Errorf("log channel got the ban word: %q", m.Content)
		}
	}
	if w.logs.Count("Pineapple") != 0 {
		t.Error("the ban-word transcript was logged")
	}
	if n := metricValue(t, w.reg, "banter_voice_transcripts_dropped_total", "blocked_user"); n != 1 {
		t.Errorf("dropped (blocked_user) = %v", n)
	}
	if n := metricValue(t, w.reg, "banter_voice_transcripts_dropped_total", "ban_word"); n != 1 {
		t.Errorf("dropped (ban_word) = %v", n)
	}
	if n := metricValue(t, w.reg, "banter_audio_packets_total", "accepted"); n == 0 {
		t.Error("alice's packets were not counted either: the blocked member's check proves nothing")
	}
}
