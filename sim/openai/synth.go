package openaisim

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"time"
	"unicode"
)

// SpeechRate is the sample rate of all simulated speech (OpenAI's pcm
// format: s16le, 24 kHz, mono).
const SpeechRate = 24000

// PerCharDuration is how much audio one character of input text produces at
// speed 1 (about 15 characters per second, like natural speech).
const PerCharDuration = 65 * time.Millisecond

// SpeechDuration is the audio length Synthesize produces for text at speed.
func SpeechDuration(text string, speed float64) time.Duration {
	if speed <= 0 {
		speed = 1
	}
	n := len([]rune(text))
	d := time.Duration(float64(time.Duration(n)*PerCharDuration) / speed)
	return max(d, 200*time.Millisecond)
}

// Synthesize renders speech for text: s16le mono at SpeechRate,
// SpeechDuration(text, speed) long. It is a small formant synthesizer: each
// word (a run of letters or digits, in the time its characters take) is read
// as phones by its spelling (synth_phones.go); a glottal pulse train with
// jitter and shimmer, on a pitch contour that declines over each phrase,
// rises on stressed syllables and falls (or, before "?", rises) at the
// phrase's end, goes through cascaded formant resonators that glide from
// phone to phone; fricatives and stop bursts are band-shaped noise, h and
// aspiration breath through the formants. Spaces and punctuation are
// silence (digital zeros). The voice name picks the pitch and the vocal
// tract's length. Output is deterministic for the same inputs. The returned
// slice is new.
func Synthesize(text, voice string, speed float64) []byte {
	if speed <= 0 {
		speed = 1
	}
	runes := []rune(text)
	total := int(SpeechDuration(text, speed).Seconds() * SpeechRate)
	perChar := float64(PerCharDuration.Seconds()*SpeechRate) / speed
	h := fnv.New64a()
	_, _ = h.Write([]byte(voice))
	vh := h.Sum64()
	_, _ = h.Write([]byte(text))
	base := 95 + float64(vh%140) // 95..235 Hz fundamental
	sy := newSynth(total, base, h.Sum64()|1)
	words := wordSpans(runes)
	for _, ph := range phrasesOf(runes, words) {
		p0 := int(float64(words[ph.first].start) * perChar)
		p1 := min(int(float64(words[ph.last].end)*perChar), total)
		for wi := ph.first; wi <= ph.last; wi++ {
			s0 := int(float64(words[wi].start) * perChar)
			s1 := min(int(float64(words[wi].end)*perChar), total)
			if s1 > s0 {
				sy.word(wordPlan{
					phones: phonesOf(runes[words[wi].start:words[wi].end]),
					s0:     s0, n: s1 - s0, p0: p0, p1: p1,
					last: wi == ph.last, question: ph.question,
				})
			}
		}
	}
	return sy.pcm()
}

// span is a word: a run of letters or digits, by rune index.
type span struct{ start, end int }

// wordSpans finds the voiced runs of text.
func wordSpans(runes []rune) []span {
	var words []span
	inWord := false
	for i, r := range runes {
		voiced := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case voiced && !inWord:
			words = append(words, span{i, i + 1})
			inWord = true
		case voiced:
			words[len(words)-1].end = i + 1
		default:
			inWord = false
		}
	}
	return words
}

// phrase is a run of words spoken on one breath: words[first..last], ended by
// punctuation or the text's end; question if that is a "?".
type phrase struct {
	first, last int
	question    bool
}

// phrasesOf splits words into phrases at the punctuation between them.
func phrasesOf(runes []rune, words []span) []phrase {
	var out []phrase
	first := 0
	for wi, w := range words {
		next := len(runes)
		if wi+1 < len(words) {
			next = words[wi+1].start
		}
		end, question := wi == len(words)-1, false
		for _, r := range runes[w.end:next] {
			if unicode.IsPunct(r) && r != '\'' && r != '’' && r != '-' {
				end = true
				question = question || r == '?'
			}
		}
		if end {
			out = append(out, phrase{first: first, last: wi, question: question})
			first = wi + 1
		}
	}
	return out
}

// Levels of the output: the loudest 20 ms is scaled to peakRMS, and samples
// beyond limitKnee are bent softly under full scale.
const (
	peakRMS   = 0.23
	limitKnee = 0.75
)

// pcm scales the rendered signal and returns it as s16le.
func (sy *synth) pcm() []byte {
	const frame, hop = SpeechRate / 50, SpeechRate / 100
	loudest := 0.0
	for i := 0; i+frame <= len(sy.buf); i += hop {
		e := 0.0
		for _, v := range sy.buf[i : i+frame] {
			e += float64(v) * float64(v)
		}
		loudest = max(loudest, e/frame)
	}
	gain := 0.0
	if loudest > 0 {
		gain = peakRMS / math.Sqrt(loudest)
	}
	out := make([]byte, 2*len(sy.buf))
	for i, v := range sy.buf {
		y := float64(v) * gain
		if a := math.Abs(y); a > limitKnee {
			y = math.Copysign(limitKnee+(1-limitKnee)*math.Tanh((a-limitKnee)/(1-limitKnee)), y)
		}
		binary.LittleEndian.PutUint16(out[2*i:], uint16(int16(math.Round(y*32767))))
	}
	return out
}
