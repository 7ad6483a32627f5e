package decision

import (
	"strings"
	"testing"
	"time"
)

// stageATurns are the turns the Stage A benchmarks and allocation tests
// cycle through: a mix of addressed, talking-about, ASR-variant and
// unaddressed turns, long and short.
func stageATextTurns() []TextTurn {
	long := "so yesterday I went to the store and they were out of everything, no bread, no milk, nothing at all, " +
		"and then on the way back it started raining and I had forgotten my umbrella, what do you think banter would say"
	turns := []TextTurn{
		textTurn("c1", "hey banter, what's the weather like today?"),
		textTurn("init", "anyone watching the game tonight?"),
		textTurn("c1", "I asked banter yesterday about the deploy"),
		textTurn("c1", long),
		textTurn("c1", "we were bantering all night"),
	}
	turns[1].BotLastSpokeAt = t0.Add(-time.Minute)
	return turns
}

func stageAVoiceTurns() []VoiceTurn {
	turns := []VoiceTurn{
		voiceTurn("hey banter, what's the weather like today?"),
		voiceTurn("hey banner, what's the weather"),
		voiceTurn("can you pass me the banner"),
		voiceTurn("mike, can you hear me?"),
		voiceTurn("uh huh"),
		voiceTurn("that's just banter, man"),
		voiceTurn("what do you think about pineapple on pizza? and be honest"),
		voiceTurn("so yesterday I went to the store and they were out of everything, no bread, no milk, nothing at all, " +
			"and then on the way back it started raining and I had forgotten my umbrella"),
	}
	turns[6].Engagement.FocusedSpeakerID, turns[6].Engagement.FocusedAt = "u1", t0.Add(-5*time.Second)
	return turns
}

// cpuPerOp reports the process CPU time per operation ("cpu-ns/op") of
// the loop run by f, next to the wall time the framework measures.
func cpuPerOp(b *testing.B, f func()) {
	b.Helper()
	b.ReportAllocs()
	start := processCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if cpu := processCPU() - start; cpu > 0 && n > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
	}
}

func BenchmarkTextStageA(b *testing.B) {
	p := textPolicy()
	withClassifier(&p)
	e := NewTextEngine(p, EngineOptions{})
	turns := stageATextTurns()
	i := 0
	cpuPerOp(b, func() {
		e.Admit(&turns[i%len(turns)])
		i++
	})
}

func BenchmarkVoiceStageA(b *testing.B) {
	e := NewVoiceEngine(voicePolicy(), EngineOptions{})
	turns := stageAVoiceTurns()
	i := 0
	cpuPerOp(b, func() {
		e.Admit(&turns[i%len(turns)])
		i++
	})
}

// BenchmarkVoiceStageATurn breaks the voice benchmark down by turn.
func BenchmarkVoiceStageATurn(b *testing.B) {
	e := NewVoiceEngine(voicePolicy(), EngineOptions{})
	for _, turn := range stageAVoiceTurns() {
		b.Run(turn.Transcript[:min(len(turn.Transcript), 20)], func(b *testing.B) {
			cpuPerOp(b, func() { e.Admit(&turn) })
		})
	}
}

// BenchmarkBaselineNaive is the same-run baseline: what a naive matcher
// would do with the same voice transcripts (lower-case, split into words,
// compare each with the name), allocating as such code does.
func BenchmarkBaselineNaive(b *testing.B) {
	turns := stageAVoiceTurns()
	var sink, i int
	cpuPerOp(b, func() {
		for _, w := range strings.Fields(strings.ToLower(turns[i%len(turns)].Transcript)) {
			if strings.Trim(w, ",.?!") == "banter" {
				sink++
			}
		}
		i++
	})
	_ = sink
}

// hardTurns exercise every path of the name matcher: clause-final and
// interrupting vocatives, nouns, quotes, code, links, split and glued
// look-alikes.
var hardTurns = []string{
	"thanks for the help banter", "I need a hand here banter can you check my math", "ok so banter aside, are we on",
	"he said 'banter, stop'", `she typed "banter, tell me a joke"`, "run `banter replay` now", "```\nbanter: x\n```",
	"read [banter](https://banter.example.com) docs", "check banter.yaml", "what did you say banter",
	"mike can you reset banter", "we're all waiting banter", "what's the weather like banter", "I love office banter",
	"banta can you hear me", "can you hear me banner", "thanks ban ter", "heybanner", "hola banter", "good morning bantor",
	"who made this banner", "banter roasted mike so hard lol", "banter is it raining", "Olá banter, tudo bem?",
}

func TestStageAZeroAllocs(t *testing.T) {
	p := textPolicy()
	withClassifier(&p)
	te := NewTextEngine(p, EngineOptions{})
	textTurns := stageATextTurns()
	voiceTurns := stageAVoiceTurns()
	for _, s := range hardTurns {
		textTurns = append(textTurns, textTurn("c1", s))
		voiceTurns = append(voiceTurns, voiceTurn(s))
	}
	for _, turn := range textTurns {
		if n := testing.AllocsPerRun(500, func() { te.Admit(&turn) }); n != 0 {
			t.Errorf("text Admit(%q): %v allocs, want 0", turn.Content, n)
		}
	}
	ve := NewVoiceEngine(voicePolicy(), EngineOptions{})
	for _, turn := range voiceTurns {
		if n := testing.AllocsPerRun(500, func() { ve.Admit(&turn) }); n != 0 {
			t.Errorf("voice Admit(%q): %v allocs, want 0", turn.Transcript, n)
		}
	}
}
