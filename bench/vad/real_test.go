package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/bench/vad/realset"
)

// TestScoreRealBySpeaker checks the per-speaker accounting the bench prints: each item's missed
// speech frames go to its speaker, a pause item counts as split when two kept final utterances
// overlap it, and the per-speaker figures add up to the clip's.
func TestScoreRealBySpeaker(t *testing.T) {
	const fl = realset.FrameLen
	ms := func(f int) time.Duration { return time.Duration(f) * 20 * time.Millisecond }
	speech := make([]bool, 300)
	for f := 10; f < 60; f++ { // ann's item: frames 10-59
		speech[f] = true
	}
	for f := 100; f < 200; f++ { // bob's pause item: frames 100-199, its pause at 140-169
		speech[f] = f < 140 || f >= 170
	}
	clean := realset.Clip{Type: "clean", Speech: speech[:100], Samples: make([]int16, 100*fl), Items: []realset.Item{
		{Name: "ann/1", Speaker: "ann", Start: 10 * fl, End: 60 * fl},
	}}
	pause := realset.Clip{Type: "pause", Speech: speech, Samples: make([]int16, 300*fl), Items: []realset.Item{
		{Name: "bob/1+600ms", Speaker: "bob", Start: 100 * fl, End: 200 * fl, Pause: 600 * time.Millisecond, PauseAt: 140 * fl},
	}}
	// ann: the utterance covers frames 20-59, so 10 of her 50 speech frames are missed
	r := scoreReal(clean, outcome{utts: []utt{{from: ms(20), to: ms(60), spanFrom: ms(20), spanTo: ms(60), decided: ms(90), kept: true, final: true}}})
	if got := r.bySpeaker["ann"]; got != (speakerResult{missed: 10, speech: 50}) || r.missedN != 10 || r.speechN != 50 {
		t.Errorf("clean: ann %+v, clip %d of %d missed; want 10 of 50", got, r.missedN, r.speechN)
	}
	// bob: two utterances over the sentence, split at its pause; all his speech heard
	two := []utt{
		{from: ms(100), to: ms(140), spanFrom: ms(100), spanTo: ms(140), decided: ms(165), kept: true, final: true},
		{from: ms(170), to: ms(200), spanFrom: ms(170), spanTo: ms(200), decided: ms(240), kept: true, final: true},
	}
	r = scoreReal(pause, outcome{utts: two})
	if got := r.bySpeaker["bob"]; got != (speakerResult{splits: 1, pauses: 1}) {
		t.Errorf("pause split: bob %+v, want 1 of 1 split and no clean speech counted", got)
	}
	// one utterance over the whole sentence: not split
	r = scoreReal(pause, outcome{utts: []utt{{from: ms(100), to: ms(200), spanFrom: ms(100), spanTo: ms(200), decided: ms(240), kept: true, final: true}}})
	if got := r.bySpeaker["bob"]; got != (speakerResult{pauses: 1}) {
		t.Errorf("pause whole: bob %+v, want 0 of 1 split", got)
	}

	// merged and printed beside Silero's
	var cleanRes, pauseRes [2]realResult
	for d := range 2 {
		cleanRes[d].merge(scoreReal(clean, outcome{}))
		pauseRes[d].merge(scoreReal(pause, outcome{utts: two}))
	}
	var b bytes.Buffer
	printBySpeaker(&b, &realset.Set{Speakers: []realset.SpeakerInfo{{Speaker: realset.Speaker{Name: "ann"}}, {Speaker: realset.Speaker{Name: "bob"}}}}, cleanRes, pauseRes)
	out := b.String()
	for _, want := range []string{"ann                  100.0 %  0/0  | 100.0 %  0/0", "bob                    0.0 %  1/1  |   0.0 %  1/1"} {
		if !strings.Contains(out, want) {
			t.Errorf("printBySpeaker:\n%s\nwant a line with %q", out, want)
		}
	}
}
