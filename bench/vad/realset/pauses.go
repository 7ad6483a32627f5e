package realset

import (
	"fmt"
	"slices"
	"time"

	"github.com/banterbot/banter/audio/pcm"
)

// pauseItems makes the pause items of a sentence, one per pause of Pauses,
// if it has a real inter-word gap (pausePoint). A pause is the whole
// stretch without speech between the two words, as the labels see it: the
// gap the speaker left plus the silence inserted at its quietest frame.
func pauseItems(c segment) ([]segment, bool) {
	at, gap, ok := pausePoint(c.s)
	if !ok {
		return nil, false
	}
	s := slices.Clone(c.s)
	scaleToActive(s, c.lab, SpeechLevelDB)
	var out []segment
	for _, p := range Pauses() {
		if p <= gap {
			return nil, false // the speaker's own gap is as long as the shortest pause
		}
		n := pcm.Speech16k().Samples(p - gap)
		ps := make([]float32, 0, len(s)+n)
		ps = append(ps, s[:at]...)
		ps = append(ps, make([]float32, n)...)
		ps = append(ps, s[at:]...)
		fadeAround(ps, at, at+n)
		pl := make([]bool, 0, len(ps)/FrameLen)
		pl = append(pl, c.lab[:at/FrameLen]...)
		pl = append(pl, make([]bool, n/FrameLen)...)
		pl = append(pl, c.lab[at/FrameLen:]...)
		a, _ := extent(pl)
		ts, tl := trim(ps, pl)
		cut := max(0, a-10) * FrameLen // what trim dropped before
		out = append(out, segment{name: fmt.Sprintf("%s+%dms", c.name, p.Milliseconds()),
			speaker: c.speaker, s: ts, lab: tl, pause: p, pauseAt: at - cut, inserted: p - gap})
	}
	return out, true
}

// pausePoint finds a real inter-word gap in a sentence: the longest run of
// at least two non-speech frames (raw labels, before bridging) with at
// least 500 ms of the sentence's speech extent on either side. It returns
// the sample at the gap's quietest frame's start and the gap's length.
func pausePoint(s []float32) (int, time.Duration, bool) {
	raw := rawSpeech(s)
	a, b := extent(raw)
	if a < 0 {
		return 0, 0, false
	}
	best, bestLen := -1, 0
	e := energies(s)
	for _, r := range runs(raw, false) {
		if r[0] < a+25 || r[1] > b-25 || r[1]-r[0] < 2 {
			continue
		}
		if r[1]-r[0] > bestLen {
			bestLen = r[1] - r[0]
			best = r[0]
			for f := r[0]; f < r[1]; f++ {
				if e[f] < e[best] {
					best = f
				}
			}
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	return best * FrameLen, time.Duration(bestLen) * pcm.FrameDuration, true
}

// fadeAround fades the audio out over 5 ms before from and in over 5 ms
// after to, so the inserted silence adds no click.
func fadeAround(s []float32, from, to int) {
	const n = Rate / 200
	for i := range n {
		g := float32(i) / n
		if j := from - 1 - i; j >= 0 {
			s[j] *= g
		}
		if j := to + i; j < len(s) {
			s[j] *= g
		}
	}
}
