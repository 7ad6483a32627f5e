package decision

import "strings"

// StreamFilter applies Stage B to a streamed reply (voice): it holds text
// back while it could still be the start of "[SKIP]" or of a structured
// {"skip": ...} answer, removes sentinels anywhere (also when split across
// deltas), and at the end says how the reply ended. Text it has returned
// is final: a "[SKIP]" at the very end of a reply that was already spoken
// is dropped, not retracted. The zero value is ready; it is not safe for
// concurrent use.
type StreamFilter struct {
	state   streamState
	held    string // undecided or structured text, or a possible sentinel tail
	emitted bool
}

type streamState uint8

const (
	streamUndecided streamState = iota
	streamSpeaking
	streamSkipped
	streamStructured
)

// Push adds a delta and returns the text that may be passed on now (often
// empty while undecided).
func (f *StreamFilter) Push(delta string) string {
	switch f.state {
	case streamSkipped:
		return ""
	case streamStructured:
		f.held += delta
		return ""
	case streamUndecided:
		f.held += delta
		t := strings.TrimLeft(f.held, " \t\r\n\"'`*_")
		switch {
		case t == "":
			return ""
		case t[0] == '{' || strings.HasPrefix(f.held, "```"):
			f.state = streamStructured
			return ""
		case len(t) < len(SkipSentinel) && hasPrefixFold(SkipSentinel, t):
			return ""
		case hasPrefixFold(t, SkipSentinel):
			f.state, f.held = streamSkipped, ""
			return ""
		}
		f.state = streamSpeaking
		delta, f.held = strings.TrimLeft(f.held, " \t\r\n"), ""
	}
	s := f.held + delta
	f.held = ""
	for {
		i := indexFold(s, SkipSentinel)
		if i < 0 {
			break
		}
		s = s[:i] + s[i+len(SkipSentinel):]
	}
	// Keep back a tail that may grow into a sentinel.
	if j := strings.LastIndexByte(s, '['); j >= 0 && len(s)-j < len(SkipSentinel) && hasPrefixFold(SkipSentinel, s[j:]) {
		s, f.held = s[:j], s[j:]
	}
	if s != "" {
		f.emitted = true
	}
	return s
}

// Skipped reports whether the reply has been recognised as a skip.
func (f *StreamFilter) Skipped() bool { return f.state == streamSkipped }

// Finish ends the stream. It returns the last text to pass on and the Stage
// B reason: llm_skip, empty_reply or model_replied.
func (f *StreamFilter) Finish() (rest string, reason Reason) {
	held := f.held
	f.held = ""
	switch f.state {
	case streamSkipped:
		return "", ReasonLLMSkip
	case streamUndecided, streamStructured:
		cleaned, skipped, r := ParseReply(held)
		if skipped {
			f.state = streamSkipped
			return "", r
		}
		f.state = streamSpeaking
		f.emitted = true
		return cleaned, r
	}
	rest = strings.TrimRight(held, " \t\r\n")
	if rest != "" {
		f.emitted = true
	}
	if !f.emitted {
		return "", ReasonEmptyReply
	}
	return rest, ReasonModelReplied
}
