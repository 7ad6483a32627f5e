package realtime

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// historyLine is one remembered turn.
type historyLine struct {
	turn string // the voice turn it belongs to (its member's words and the answer), "" for none
	who  string // speaker name, or "" for the bot
	text string
	cut  bool // the bot was interrupted
}

// history keeps the recent turns of the conversation so that a new realtime
// session (after a drop, or a rollover before the provider's session limit)
// starts with a text summary of what was said.
type history struct {
	max      int // lines kept
	maxChars int // characters per line

	mu    sync.Mutex // guards following
	lines []historyLine
}

// add remembers a line of turn (a member's words, or the bot's answer to them; "" for none, such
// as the join greeting).
func (h *history) add(turn, who, text string, cut bool) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if utf8.RuneCountInString(text) > h.maxChars {
		r := []rune(text)
		text = string(r[:h.maxChars]) + "…"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.lines) >= h.max {
		h.lines = append(h.lines[:0], h.lines[len(h.lines)-h.max+1:]...)
	}
	h.lines = append(h.lines, historyLine{turn: turn, who: who, text: text, cut: cut})
}

// summary renders the remembered turns, oldest first, or "" if none.
func (h *history) summary() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Summary of the voice conversation so far (most recent last); continue it naturally:")
	for _, l := range h.lines {
		b.WriteString("\n- ")
		if l.who == "" {
			b.WriteString("You")
		} else {
			b.WriteString(l.who)
		}
		b.WriteString(": ")
		b.WriteString(l.text)
		if l.cut {
			b.WriteString(" (interrupted)")
		}
	}
	return b.String()
}

// cutText returns the part of text spoken in played of total audio, on a
// word boundary, for an assistant reply that was interrupted.
func cutText(text string, played, total int) string {
	if total <= 0 || played >= total {
		return text
	}
	if played <= 0 {
		return ""
	}
	n := len(text) * played / total
	for n < len(text) && text[n] != ' ' {
		n++
	}
	return strings.TrimSpace(text[:n])
}

// amendLast replaces the text of the last line if it is the bot's and
// marks it interrupted.
func (h *history) amendLast(text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.lines); n > 0 && h.lines[n-1].who == "" {
		h.lines[n-1].text, h.lines[n-1].cut = text, true
	}
}

// forget removes the lines of turn: a turn a false end took back, and the answer to it (its
// words come again with the whole).
func (h *history) forget(turn string) {
	if turn == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = slices.DeleteFunc(h.lines, func(l historyLine) bool { return l.turn == turn })
}
