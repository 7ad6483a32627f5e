package openaisim

import (
	"regexp"
	"strings"
)

// A request to voice given text, as a text-to-speech front end asks a speech model: "Read the
// text below aloud exactly as written … Text:\n<text>" (banter's brain strategy sends this to the
// Gemini Live API as a user text turn). A real model says the text, not the instruction around
// it; with no rule for the request, the simulator does the same (makePlan's default). Anything
// else keeps the default echo.

// readAloudAsk is the instruction part of such a request: it asks for the text to be read, said,
// spoken or repeated, aloud, verbatim, exactly or word for word.
var readAloudAsk = regexp.MustCompile(`(?is)\b(read|say|speak|repeat)\b.*\b(aloud|out loud|verbatim|exactly|word for word)\b`)

// readAloudText is the marker of the text to voice: "Text:" at the start of a line, the text
// after it (on the same line or the lines below).
var readAloudText = regexp.MustCompile(`(?im)^[ \t]*text:[ \t]*`)

// readAloud returns the text a request to voice text asks to be said, and whether input is such
// a request: an instruction (readAloudAsk) followed by a "Text:" line with something after it.
// The text is what follows the last marker, trimmed, without quotes around it.
func readAloud(input string) (string, bool) {
	locs := readAloudText.FindAllStringIndex(input, -1)
	if len(locs) == 0 {
		return "", false
	}
	last := locs[len(locs)-1]
	if !readAloudAsk.MatchString(input[:last[0]]) {
		return "", false
	}
	text := strings.TrimSpace(input[last[1]:])
	for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}} {
		if len(text) > len(q[0])+len(q[1]) && strings.HasPrefix(text, q[0]) && strings.HasSuffix(text, q[1]) {
			text = strings.TrimSpace(text[len(q[0]) : len(text)-len(q[1])])
			break
		}
	}
	return text, text != ""
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
