package decision

import (
	"bytes"
	"strings"
)

// StreamFilter applies Stage B to a streamed reply (voice): it holds text
// back while it could still be the start of "[SKIP]" or of a structured
// {"skip": ...} answer, removes sentinels anywhere (also when split across
// deltas), and at the end says how the reply ended. Text it has returned
// is final: a "[SKIP]" at the very end of a reply that was already spoken
// is dropped, not retracted. The zero value is ready; it is not safe for
// concurrent use.
type StreamFilter struct {
	state   streamState
	held    string // undecided or structured text
	tail    []byte // while speaking: a run of sentinel beginnings held back
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
		return f.speak(strings.TrimLeft(f.held, " \t\r\n"))
	}
	return f.speak(delta)
}

// speak passes on text once the reply is known to be spoken. Every
// sentinel is removed, also one that only forms once an inner one is gone
// ("[[SKIP]SKIP]" is "[SKIP]" once, then nothing), and the tail that later
// text could still turn into a sentinel is held back: not only a "[SK" at
// the very end but every run of sentinel beginnings ("[[S[SK"), since each
// can close in turn ("IP]KIP]SKIP]").
//
// The held tail is a stack (see removeSentinels) that the delta's bytes are
// pushed on, so the work per delta is proportional to the delta, not to the
// tail: a reply of a thousand "[" streamed a byte at a time stays linear.
func (f *StreamFilter) speak(delta string) string {
	n := len(SkipSentinel)
	// Every prefix of the held tail is itself a run of sentinel beginnings.
	known := len(f.tail)
	for i := 0; i < len(delta); i++ {
		f.tail = append(f.tail, delta[i])
		if delta[i] == ']' && len(f.tail) >= n && isSentinelPrefix(f.tail[len(f.tail)-n:]) {
			f.tail = f.tail[:len(f.tail)-n]
			known = min(known, len(f.tail))
		}
	}
	k := sentinelTail(f.tail, known)
	out := string(f.tail[:k])
	f.tail = append(f.tail[:0], f.tail[k:]...)
	if out != "" {
		f.emitted = true
	}
	return out
}

// removeSentinels removes every "[SKIP]" (ASCII case-insensitive) from s
// until none is left, in one pass: the kept bytes are a stack, and a ']'
// that completes a sentinel on top of it pops the sentinel, which exposes
// the bytes before it to the text after it. The sentinel has no border (no
// proper prefix is also a suffix), so the result is the same in whatever
// order occurrences are removed.
func removeSentinels(s string) string {
	if indexFold(s, SkipSentinel) < 0 {
		return s
	}
	n := len(SkipSentinel)
	buf := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		buf = append(buf, s[i])
		if s[i] == ']' && len(buf) >= n && isSentinelPrefix(buf[len(buf)-n:]) {
			buf = buf[:len(buf)-n]
		}
	}
	return string(buf)
}

// sentinelTail returns where the longest suffix of s starts that later text
// could remove: a run of proper sentinel beginnings ("[", "[S", ... "[SKIP",
// any case). s holds no whole sentinel, and s[:known] is known to be such a
// run, so the scan stops on reaching it. Everything before is final.
func sentinelTail(s []byte, known int) int {
	start := len(s)
	for end := len(s); end > 0; end = start {
		j := bytes.LastIndexByte(s[:end], '[')
		if j < 0 || end-j >= len(SkipSentinel) || !isSentinelPrefix(s[j:end]) {
			break
		}
		start = j
		if j < known {
			return 0
		}
	}
	return start
}

// isSentinelPrefix reports whether p is a prefix of "[SKIP]" in ASCII case
// folding (the sentinel itself included).
func isSentinelPrefix[T string | []byte](p T) bool {
	if len(p) > len(SkipSentinel) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if lower(p[i]) != lower(SkipSentinel[i]) {
			return false
		}
	}
	return true
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
	rest = strings.TrimRight(string(f.tail), " \t\r\n")
	f.tail = f.tail[:0]
	if rest != "" {
		f.emitted = true
	}
	if !f.emitted {
		return "", ReasonEmptyReply
	}
	return rest, ReasonModelReplied
}
