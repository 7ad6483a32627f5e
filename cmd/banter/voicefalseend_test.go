package main

import (
	"testing"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
)

// falseEndRound is what one false end of a discord.js member gave.
type falseEndRound struct {
	name string
	// heardBefore is the bot's audio the member received before she went on (its first packets:
	// she goes on at the fifth); heardAfter the bot's packets she received from going on to the
	// end of the cut answer's talk spurt, and heardFor how long after going on the last came.
	heardBefore, heardAfter int
	heardFor                float64 // ms on the member's clock
	// playedAtCut and playedAtEnd are banter's count of the answer's audio when her speech was
	// confirmed (voice_false_end) and when the answer ended (stt_pipeline_reply_interrupted).
	playedAtCut, playedAtEnd float64
	answers                  int // stt_pipeline_reply_spoken of the round
	transcript, spoken       any
}

// falseEnd has alice say before, stop, and go on with after 100 ms (five packets) into the
// answer she receives: a false end. It checks, from banter's log, that the answer stopped within
// 200 ms of audio of her confirmed speech and that her whole question was answered once, from a
// turn that holds both halves; and it returns what she heard. preRoll is the audio the first
// utterance's audio holds before the question starts.
func (v *voiceBanter) falseEnd(t *testing.T, alice *djsMember, stt *sweepSTT, name string, before, after []int16, preRoll time.Duration) falseEndRound {
	t.Helper()
	r := falseEndRound{name: name}
	failed := t.Failed()
	// The first utterance is before alone: its spans hear the question; her going on opens a
	// transcription session of its own, which hears the continuation.
	stt.round(preRoll + time.Duration(len(before)/2)*time.Second/48000 + 400*time.Millisecond)
	logFrom := len(v.logs.String())
	count := map[string]int{}
	for _, name := range sweepTurnEvents {
		count[name] = len(v.events(name))
	}
	bot := string(v.dsim.BotID())
	alice.send("play " + writeRawPCM(t, before))
	alice.wait("the end of alice's first half", func(e djsEvent) bool { return e.Event == "spoken" })
	alice.send("playafter 5 " + writeRawPCM(t, after))
	resumed := alice.wait("alice going on", func(e djsEvent) bool {
		if e.User == bot && e.Event == "opus" {
			r.heardBefore++
		}
		return e.Event == "resumed"
	})
	alice.wait("the cut answer's end", func(e djsEvent) bool {
		if e.User == bot && e.audio() {
			r.heardAfter++
			r.heardFor = e.T - resumed.T
		}
		return e.User == bot && e.Event == "speaking" && !e.Speaking
	})
	v.until(t, "an answer spoken", func() bool {
		return len(v.events("stt_pipeline_reply_spoken")) > count["stt_pipeline_reply_spoken"]
	})
	alice.quiet()
	spoken := v.events("stt_pipeline_reply_spoken")[count["stt_pipeline_reply_spoken"]:]
	r.answers = len(spoken)
	r.transcript, r.spoken = spoken[0]["transcript"], spoken[0]["spoken"]
	fe := v.events("voice_false_end")[count["voice_false_end"]:]
	cut := v.events("stt_pipeline_reply_interrupted")[count["stt_pipeline_reply_interrupted"]:]
	if len(fe) != 1 || len(cut) != 1 || cut[0]["false_end"] != true || fe[0]["reason"] != "during_reply" {
		t.Errorf("%s: false ends %v, interrupted answers %v: want the half-answer stopped by one false end", name, fe, cut)
	} else {
		r.playedAtCut, _ = fe[0]["played_ms"].(float64)
		r.playedAtEnd, _ = cut[0]["played_ms"].(float64)
		if r.playedAtCut <= 0 || r.playedAtEnd < r.playedAtCut || r.playedAtEnd-r.playedAtCut > 200 {
			t.Errorf("%s: played %v ms when her speech was confirmed, %v ms when the answer ended: want at most 200 ms more",
				name, r.playedAtCut, r.playedAtEnd)
		}
	}
	if r.heardBefore < 5 {
		t.Errorf("%s: alice went on after %d packets of the answer, want 5", name, r.heardBefore)
	}
	// the whole, as the session joins the two turns (sweepHeard), answered once
	if r.answers != 1 || (r.transcript != sweepHeard && r.transcript != sweepWhole) || r.spoken != sweepAnswer {
		t.Errorf("%s: answers %v: want one, %q to %q", name, spoken, sweepAnswer, sweepHeard)
	}
	for _, name := range []string{"stt_pipeline_reply_denied", "stt_pipeline_reply_skipped", "voice_turn_failed"} {
		if evs := v.events(name)[count[name]:]; len(evs) != 0 {
			t.Errorf("%s: %s %v: want none", r.name, name, evs)
		}
	}
	if t.Failed() && !failed {
		t.Logf("%s: banter's log of the round:\n%s", name, v.logs.String()[logFrom:])
	}
	return r
}

// TestRunVoiceDiscordJSFalseEnd is issue 30's "a member resumes 100 ms after the bot starts" with
// a real client: the unmodified discord.js member (DAVE with davey, its own Opus encoder and
// AudioPlayer) asks "hey banter, what's the weather like?" to `banter run` with the shipped
// defaults, stops, and goes on ("in Paris tomorrow?") at the fifth packet of the answer it
// receives. The answer stops within 200 ms of audio of her confirmed speech, and the whole is
// answered once. Twice, so that the second false end comes in a session that has had one; then,
// with a tenth of her packets lost on their way to the server and one in twenty reordered (a
// poor network), a 700 ms pause inside the question (no bot audio before her end of voice, one
// answer, to the whole) and a third false end; and twice more the 700 ms pause, with her
// packets 0–150 ms late on their way instead.
func TestRunVoiceDiscordJSFalseEnd(t *testing.T) {
	question, goOn := voiceFixture(t, "hey-banter-weather"), voiceFixture(t, "mike-hear-me")
	v, alice, stt := startSweep(t, 3*time.Minute, sweepArm{})
	var rounds []falseEndRound
	for _, name := range []string{"first", "second"} {
		rounds = append(rounds, v.falseEnd(t, alice, stt, name, question, goOn, 200*time.Millisecond))
	}
	v.vs.SetFaults(string(v.alice), voicesim.ToServer, voicesim.Faults{LossPercent: 10, ReorderPercent: 5, Seed: 30})
	p := v.sweep(t, alice, stt, question, goOn, 700*time.Millisecond, 200*time.Millisecond)
	t.Logf("with loss: a 700 ms pause: wrong starts %d/%d, %d answers, end of voice → first bot audio at the member %.1f ms",
		p.wrongSpurts, p.wrongFrames, p.answers, p.ms)
	rounds = append(rounds, v.falseEnd(t, alice, stt, "with loss", question, goOn, 200*time.Millisecond))
	if st := v.vs.Stats(); st.FaultDropped == 0 {
		t.Errorf("no packet of hers was dropped: %+v", st)
	}
	// A path whose packets come 0–150 ms late (in order): the pause's packets, and the first of
	// the words after it, may come up to 150 ms late. banter holds the end of the turn by the
	// lateness it has measured on her stream (audio.Listener's jitter hold), so the pause is
	// not heard as longer than it was.
	v.vs.SetFaults(string(v.alice), voicesim.ToServer, voicesim.Faults{Jitter: 150 * time.Millisecond, Seed: 31})
	for range 2 {
		j := v.sweep(t, alice, stt, question, goOn, 700*time.Millisecond, 200*time.Millisecond)
		t.Logf("with jitter: a 700 ms pause: wrong starts %d/%d, %d answers, end of voice → first bot audio at the member %.1f ms",
			j.wrongSpurts, j.wrongFrames, j.answers, j.ms)
	}
	logFalseEnds(t, rounds)
}

// logFalseEnds logs what the member heard of each round's cut answer.
func logFalseEnds(t *testing.T, rounds []falseEndRound) {
	t.Helper()
	t.Logf("round | bot packets before she went on | after (until the cut answer's spurt ended), last at | banter played at her confirmed speech → at the stop | answers")
	for _, r := range rounds {
		t.Logf("%s | %d | %d, %.1f ms | %v → %v ms | %d", r.name, r.heardBefore, r.heardAfter, r.heardFor, r.playedAtCut, r.playedAtEnd, r.answers)
	}
	lo, hi := rounds[0].heardFor, rounds[0].heardFor
	for _, r := range rounds {
		lo, hi = min(lo, r.heardFor), max(hi, r.heardFor)
	}
	t.Logf("the bot heard after she went on: %.1f–%.1f ms", lo, hi)
}

// TestRunVoiceDiscordJSFalseEndRealVoices is TestRunVoiceDiscordJSFalseEnd with real voices: the
// sentences of TestRunVoiceDiscordJSPauseSweepRealVoices (Allison and Carlo of bench/vad's test
// split, Menardi and Armelle of its fresh split), cut at their pause; the member says the words
// before it and goes on with those after it at the fifth packet of the answer. It needs the
// real recordings (make vad-data), so it runs only when asked: BANTER_REAL_VOICES=1 (about a
// minute).
func TestRunVoiceDiscordJSFalseEndRealVoices(t *testing.T) {
	sentences := realVoiceSentences(t, "about a minute", []time.Duration{700 * time.Millisecond})
	v, alice, stt := startSweep(t, 5*time.Minute, sweepArm{})
	var rounds []falseEndRound
	for _, s := range sentences {
		// before starts 200 ms before the first word, the pre-roll the utterance's audio takes
		rounds = append(rounds, v.falseEnd(t, alice, stt, s.name, s.before, s.after, 0))
	}
	logFalseEnds(t, rounds)
}
