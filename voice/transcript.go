package voice

import (
	"strings"
	"time"
	"unicode"
)

// DropReason says why a transcript was not turned into a turn.
type DropReason uint8

// Drop reasons. The zero value DropNone keeps the transcript.
const (
	DropNone DropReason = iota
	// DropEmpty: nothing but white space.
	DropEmpty
	// DropPunctuation: no letter or digit at all ("...", "?").
	DropPunctuation
	// DropHallucination: a phrase speech-to-text models are known to produce
	// on near-silence ("Thank you.", "you", "Thanks for watching!").
	DropHallucination
	// DropImplausible: too few characters for the length of the clip (a
	// long clip with one short word is noise that happened to decode).
	DropImplausible
	// DropBanWord: the transcript holds one of safety.banWords (it never
	// enters the timeline, the log channel or a prompt).
	DropBanWord
	// DropBlockedUser: the speaker is in permissions.blockedUserIds (not
	// even transcribed).
	DropBlockedUser
)

// String returns the reason's metric label.
func (r DropReason) String() string {
	switch r {
	case DropNone:
		return "none"
	case DropEmpty:
		return "empty"
	case DropPunctuation:
		return "punctuation"
	case DropHallucination:
		return "hallucination"
	case DropImplausible:
		return "implausible"
	case DropBanWord:
		return "ban_word"
	case DropBlockedUser:
		return "blocked_user"
	}
	return "unknown"
}

// knownHallucinations are normalised (lower case, letters, digits and single
// spaces) transcripts that Whisper-family models emit for silence, breath or
// background noise.
var knownHallucinations = map[string]bool{
	"you": true, "thank you": true, "thanks": true, "thank you very much": true,
	"thanks for watching": true, "thank you for watching": true, "bye": true,
	"thank you so much": true, "please subscribe": true, "subtitles by the amara org community": true,
	"uh": true, "um": true, "hmm": true, "mm": true, "oh": true, "so": true, "the": true, "i": true,
}

// minCharsPerSecond is the fewest letters per second of clip beyond the
// first grace seconds that a plausible transcript has. Speech runs at 10-15
// characters per second; a clip of several seconds that yields one short word
// was mostly noise.
const (
	minCharsPerSecond  = 1.0
	plausibilityGrace  = 3 * time.Second
	hallucinationLimit = 32 // longer transcripts are never treated as hallucinations
)

// CheckTranscript decides whether a transcript of a clip of length clip is
// worth a turn. It returns the trimmed text and DropNone, or the reason to drop
// it. It does not allocate for kept transcripts without surrounding space.
func CheckTranscript(text string, clip time.Duration) (string, DropReason) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", DropEmpty
	}
	letters := 0
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			letters++
		}
	}
	if letters == 0 {
		return "", DropPunctuation
	}
	if len(text) <= hallucinationLimit && knownHallucinations[normalise(text)] {
		return "", DropHallucination
	}
	if clip > plausibilityGrace {
		need := int(minCharsPerSecond * (clip - plausibilityGrace).Seconds())
		if letters < need {
			return "", DropImplausible
		}
	}
	return text, DropNone
}

// normalise lower-cases s and keeps letters and digits, with single spaces
// between words.
func normalise(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
		case r == '\'':
			// "don't" stays one word
		default:
			space = true
		}
	}
	return b.String()
}

// mergeTranscripts joins the transcripts of a long utterance's chunks.
func mergeTranscripts(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	return b.String()
}
