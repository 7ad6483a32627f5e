package main

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
)

// ledger follows every addressed message from the bot's log: what became of it.
type ledger struct {
	mu           sync.Mutex // guards following
	posted       map[discordsim.MessageID]time.Time
	explained    map[discordsim.MessageID]string // why it was not answered
	coalesced    map[discordsim.MessageID]bool   // answered together with another
	voiceReplies int
	faults       int
}

func newLedger() *ledger {
	return &ledger{posted: map[discordsim.MessageID]time.Time{}, explained: map[discordsim.MessageID]string{},
		coalesced: map[discordsim.MessageID]bool{}}
}

func (l *ledger) addressed(id discordsim.MessageID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.posted[id] = time.Now()
}

func (l *ledger) fault(string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.faults++
}

// logLine is the part of a bot log line the ledger reads.
type logLine struct {
	Msg        string   `json:"msg"`
	MessageID  string   `json:"message_id"`
	TurnID     string   `json:"turn_id"`
	TriggerIDs []string `json:"trigger_ids"`
}

// read consumes the bot's JSON log until it ends.
func (l *ledger) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e logLine
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		l.mu.Lock()
		switch e.Msg {
		case "turn_coalesced":
			l.coalesced[discordsim.MessageID(e.MessageID)] = true
		case "turn_shed", "message_ignored":
			l.explained[discordsim.MessageID(e.MessageID)] = e.Msg
		case "reply_rate_limited":
			for _, id := range append(e.TriggerIDs, e.MessageID) {
				l.explained[discordsim.MessageID(id)] = e.Msg
			}
		case "send_lost":
			l.explained[discordsim.MessageID(e.TurnID)] = e.Msg
		case "stt_pipeline_reply_spoken", "realtime_reply_spoken":
			l.voiceReplies++
		}
		l.mu.Unlock()
	}
}

// tally is the ledger at one moment.
type tally struct {
	addressed, answered, explained int
	unexplained                    int // without an outcome for longer than the grace period
	pending                        int // without an outcome yet
	voiceReplies, faults           int
}

// snapshot counts outcomes; a message without one counts as unexplained once older than grace.
func (l *ledger) snapshot(dsim *discordsim.Server, grace time.Duration) tally {
	replied := map[discordsim.MessageID]bool{}
	for _, m := range dsim.Sent() {
		if m.Author == dsim.BotID() && m.ReplyTo() != "" {
			replied[m.ReplyTo()] = true
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := tally{addressed: len(l.posted), voiceReplies: l.voiceReplies, faults: l.faults}
	for id, at := range l.posted {
		switch {
		case replied[id] || l.coalesced[id]:
			t.answered++
		case l.explained[id] != "":
			t.explained++
		default:
			t.pending++
			if time.Since(at) > grace {
				t.unexplained++
			}
		}
	}
	return t
}
