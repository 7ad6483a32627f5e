package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// TestRunVoiceTurnTaking runs `banter run` with the default turn-taking (voice.endpointing and
// voice.speculation as shipped) and a member speaking live: alice asks a question, pauses
// 600 ms and goes on: nothing from the bot while she talks, one answer, to the whole. Then she
// asks again, stops, and 100 ms into the answer goes on: a false end. The answer stops within
// 200 ms of audio of her confirmed speech, and her question is answered once, as a whole, from
// a prompt without the half-answer.
func TestRunVoiceTurnTaking(t *testing.T) {
	const half, more, whole = "hey banter, what's the weather like?", "in Paris tomorrow?", "Sunny in Paris tomorrow."
	gen := func(pattern string) openaisim.Match {
		return openaisim.Match{Endpoint: openaisim.EndpointResponses, Stream: openaisim.Bool(true), InputPattern: pattern}
	}
	v := startVoiceBanter(t, "voice:\n  joinGreetingWindowSeconds: 0\n",
		openaisim.Rule{Match: gen(`like\?$`), Reply: openaisim.Reply{Text: "Let me tell you all about the weather. " +
			"In the morning there is fog over the hills. By noon the sun comes out and it gets quite warm."}},
		openaisim.Rule{Match: gen("Paris"), Reply: openaisim.Reply{Text: whole}})
	bot := string(v.dsim.BotID())
	question, goOn := voiceFixture(t, "hey-banter-weather"), voiceFixture(t, "mike-hear-me")

	// A pause of 600 ms inside the question.
	v.osim.QueueTranscripts("hey banter, what's the weather like in Paris tomorrow?")
	pause := make([]int16, 2*48000*600/1000)
	if err := v.member.PlayPCM(v.ctx, slices.Concat(question, pause, goOn)); err != nil {
		t.Fatal(err)
	}
	if n := len(v.member.Heard(bot)); n != 0 {
		t.Errorf("alice heard %d frames from the bot while she was talking", n)
	}
	v.waitLog(t, `"msg":"stt_pipeline_reply_spoken"`, `"spoken":"`+whole+`"`)
	if n := len(v.events("stt_pipeline_reply_spoken")); n != 1 {
		t.Errorf("%d answers to one question", n)
	}

	// A false end: she stops, the end silence passes, the bot answers, she goes on. What she
	// heard of the first answer is counted once its talk spurt has reached her to its end (the
	// five silence frames that close it), not when the bot logs it.
	v.until(t, "the first answer's closing silence frames", func() bool { return v.member.Stats().Silence >= 5 })
	v.osim.QueueTranscripts(half, more)
	heard := len(v.member.Heard(bot))
	if err := v.member.PlayPCM(v.ctx, question); err != nil {
		t.Fatal(err)
	}
	if err := v.member.WaitHeard(v.ctx, bot, heard+5); err != nil {
		t.Fatalf("no answer: %v\n%s", err, v.logs.String())
	}
	if err := v.member.PlayPCM(v.ctx, goOn); err != nil {
		t.Fatal(err)
	}
	v.waitLog(t, `"msg":"stt_pipeline_reply_spoken"`, `"transcript":"`+half+" "+more+`"`)
	fe, cut := v.events("voice_false_end"), v.events("stt_pipeline_reply_interrupted")
	if len(fe) != 1 || len(cut) != 1 || cut[0]["false_end"] != true {
		t.Fatalf("false ends %v, interrupted answers %v: want the half-answer stopped by one false end", fe, cut)
	}
	atCut, _ := fe[0]["played_ms"].(float64)
	atEnd, _ := cut[0]["played_ms"].(float64)
	if atCut <= 0 || atEnd < atCut || time.Duration(atEnd-atCut)*time.Millisecond > 200*time.Millisecond {
		t.Errorf("played %v ms when her speech was confirmed, %v ms when the answer ended: want at most 200 ms more", atCut, atEnd)
	}
	if n := len(v.events("stt_pipeline_reply_spoken")); n != 2 {
		t.Errorf("%d answers spoken, want 2 (one a question)", n)
	}
	// One generation for the whole question, and at most one more for each held reply to it that
	// a speculation at a dip inside her going on started and discarded (a stall of her packets
	// under load makes a dip between words a pause: see voice TestFalseEnd).
	held := 0
	for _, d := range v.events("voice_speculation_discarded") {
		if d["stage"] == "reply" && strings.Contains(fmt.Sprint(d["transcript"]), more) {
			held++
		}
	}
	var prompts []string
	for _, r := range v.osim.RequestsFor(openaisim.EndpointResponses) {
		if r.Stream && strings.Contains(r.LastUserText, half+" "+more) {
			prompts = append(prompts, r.Prompt)
		}
	}
	if len(prompts) < 1 || len(prompts) > 1+held || slices.ContainsFunc(prompts, func(p string) bool {
		return strings.Contains(p, "fog over the hills") || strings.Contains(p, "[interrupted]")
	}) {
		t.Errorf("generations for the whole question: %q\nwant one (and %d discarded held replies), with nothing of the half-answer", prompts, held)
	}
}

// TestRunVoiceRealtimeFalseEnd: the false end of TestRunVoiceTurnTaking with `voice.mode:
// realtime` (native): alice asks, the realtime model starts to answer, she goes on. The answer
// stops, its item and the item of her first half are deleted from the model's conversation, and
// the whole is answered once, by a response that sees her once and nothing of the cut answer.
func TestRunVoiceRealtimeFalseEnd(t *testing.T) {
	const half, more, whole = "hey banter, what's the weather like?", "in Paris tomorrow?", "Sunny in Paris tomorrow."
	answers := openaisim.Match{Endpoint: openaisim.EndpointRealtimeResponse}
	v := startVoiceBanter(t, "voice:\n  mode: realtime\n  realtimeReplyStrategy: native\n  joinGreetingWindowSeconds: 0\n"+
		"  endpointing:\n    falseEndMs: 10000\n",
		openaisim.Rule{Name: "half", Match: answers, Times: 1, Latency: openaisim.Latency{PerToken: 40 * time.Millisecond},
			Reply: openaisim.Reply{Text: "Let me tell you all about the weather. In the morning there is fog over the hills. " +
				"By noon the sun comes out and it gets quite warm."}},
		openaisim.Rule{Name: "whole", Match: answers, Reply: openaisim.Reply{Text: whole}})
	bot := string(v.dsim.BotID())
	question, goOn := voiceFixture(t, "hey-banter-weather"), voiceFixture(t, "mike-hear-me")
	v.osim.QueueTranscripts(half, more)
	if err := v.member.PlayPCM(v.ctx, question); err != nil {
		t.Fatal(err)
	}
	if err := v.member.WaitHeard(v.ctx, bot, 5); err != nil {
		t.Fatalf("no answer: %v\n%s", err, v.logs.String())
	}
	if err := v.member.PlayPCM(v.ctx, goOn); err != nil {
		t.Fatal(err)
	}
	v.waitLog(t, `"msg":"realtime_reply_spoken"`, `"spoken":"`+whole+`"`)
	fe, cut, deleted := v.events("voice_false_end"), v.events("realtime_interrupted"), v.events("realtime_items_deleted")
	if len(fe) != 1 || len(cut) != 1 || len(deleted) != 1 || deleted[0]["sent"] != 2.0 {
		t.Fatalf("false ends %v, cut answers %v, deletes %v: want the half-answer stopped by one false end, two items deleted",
			fe, cut, deleted)
	}
	if n := len(v.events("realtime_reply_spoken")); n != 1 {
		t.Errorf("%d answers spoken, want 1", n)
	}
	// It stopped within 200 ms of audio of her confirmed speech, as the STT pipeline's answer does.
	stopped := v.events("stt_pipeline_reply_interrupted")
	atCut, _ := fe[0]["played_ms"].(float64)
	if len(stopped) != 1 {
		t.Fatalf("interrupted answers %v: want the half-answer", stopped)
	}
	if atEnd, _ := stopped[0]["played_ms"].(float64); stopped[0]["false_end"] != true || atCut <= 0 || atEnd < atCut || atEnd-atCut > 200 {
		t.Errorf("played %v ms at the false end, %v ms when the answer ended: want at most 200 ms more", atCut, atEnd)
	}
	rec := v.osim.RequestsFor(openaisim.EndpointRealtimeResponse)
	if len(rec) != 2 || rec[1].Rule != "whole" {
		t.Fatalf("%d realtime responses: want the half-answer's and the whole's", len(rec))
	}
	var users, assistants int
	for _, l := range strings.Split(rec[1].Prompt, "\n") {
		switch {
		case strings.HasPrefix(l, "user:"):
			users++
		case strings.HasPrefix(l, "assistant:"):
			assistants++
		}
	}
	if users != 1 || assistants != 0 {
		t.Errorf("the whole's response sees %d user and %d assistant items, want 1 and 0:\n%s", users, assistants, rec[1].Prompt)
	}
}
