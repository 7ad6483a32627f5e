package main

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
)

// minHeard is how many 20 ms frames of a reply the voice member must hear for the reply to
// count as answered (the answer used is about a second long).
const minHeard = 10

// ledger follows every addressed text message and every voice utterance from the bot's log:
// what became of it.
type ledger struct {
	heard func() int // frames of the bot the voice member has heard so far (nil before it joined)

	mu        sync.Mutex // guards following
	posted    map[discordsim.MessageID]time.Time
	explained map[discordsim.MessageID]string               // why it was not answered
	into      map[discordsim.MessageID]discordsim.MessageID // coalesced into that turn's reply
	voice     map[string]*utterance                         // by marker
	order     []*utterance                                  // in the order spoken
	gaps      []gap                                         // the bot had no voice connection
	gapOpen   time.Time                                     // an open gap's start (zero: connected)
	session   time.Time                                     // the voice session's start (zero: none)
	faults    map[string]int
}

// utterance is one thing the voice member said to the bot.
type utterance struct {
	marker     string
	start, end time.Time // its playback
	heard0     int       // frames of the bot the member had heard at its start
	// untranscribed: the bot never asked for its transcript (it did not hear it).
	untranscribed bool
	outcome       string // "answered", "explained" or "" (pending)
	why           string
	spoken        bool // the bot logged its reply as spoken (answered once heard)
	// heardCap is what the member had heard when it began the next utterance (-1 before):
	// frames after that belong to later replies.
	heardCap int
}

// gap is a time the bot had no voice connection: audio spoken then cannot reach it.
type gap struct{ from, to time.Time }

func newLedger() *ledger {
	return &ledger{posted: map[discordsim.MessageID]time.Time{}, explained: map[discordsim.MessageID]string{},
		into: map[discordsim.MessageID]discordsim.MessageID{}, voice: map[string]*utterance{}, faults: map[string]int{}}
}

func (l *ledger) addressed(id discordsim.MessageID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.posted[id] = time.Now()
}

func (l *ledger) fault(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.faults[name]++
}

// spoke records an utterance the member is about to say.
func (l *ledger) spoke(u *utterance) {
	l.mu.Lock()
	defer l.mu.Unlock()
	u.heardCap = -1
	if n := len(l.order); n > 0 && l.order[n-1].heardCap < 0 {
		l.order[n-1].heardCap = u.heard0
	}
	l.voice[u.marker] = u
	l.order = append(l.order, u)
}

// finished records the end of an utterance's playback and whether the bot transcribed it.
func (l *ledger) finished(u *utterance, end time.Time, transcribed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	u.end, u.untranscribed = end, !transcribed
}

// settled reports whether u has an outcome (or was never transcribed: nothing more will come).
func (l *ledger) settled(u *utterance) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.checkHeard(u)
	return u.outcome != "" || u.untranscribed
}

// logLine is the part of a bot log line the ledger reads.
type logLine struct {
	Time       time.Time `json:"time"`
	Msg        string    `json:"msg"`
	MessageID  string    `json:"message_id"`
	Into       string    `json:"into"`
	TurnID     string    `json:"turn_id"`
	TriggerIDs []string  `json:"trigger_ids"`
	Transcript string    `json:"transcript"`
	Stage      string    `json:"stage"`
}

// voiceExplained are the log events, naming an utterance by its transcript, that end it
// without an answer.
var voiceExplained = map[string]bool{"stt_pipeline_reply_interrupted": true, "stt_pipeline_reply_denied": true,
	"stt_pipeline_reply_skipped": true, "voice_turn_failed": true, "voice_transcript_dropped": true}

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
		l.textLine(e)
		l.voiceLine(e)
		l.mu.Unlock()
	}
}

// textLine records what a log line says about addressed text messages.
func (l *ledger) textLine(e logLine) {
	switch e.Msg {
	case "turn_coalesced":
		l.into[discordsim.MessageID(e.MessageID)] = discordsim.MessageID(e.Into)
	case "turn_shed", "message_ignored", "reply_skipped":
		l.explained[discordsim.MessageID(e.MessageID)] = e.Msg
	case "reply_rate_limited":
		for _, id := range append(e.TriggerIDs, e.MessageID) {
			l.explained[discordsim.MessageID(id)] = e.Msg
		}
	case "send_lost":
		l.explained[discordsim.MessageID(e.TurnID)] = e.Msg
	}
}

// voiceLine records what a log line says about utterances and the bot's voice connection.
func (l *ledger) voiceLine(e logLine) {
	switch e.Msg {
	case "voice_session_start":
		l.session = e.Time
	case "voice_session_end":
		// Utterances spoken to this session and still open end with it.
		for _, u := range l.order {
			if u.outcome == "" && !l.session.IsZero() && !u.start.Before(l.session) && !u.start.After(e.Time) {
				u.outcome, u.why = "explained", "voice_session_end"
			}
		}
		l.session = time.Time{}
		l.openGap(e.Time)
	case "voice: connection ended", "voice_connection_lost":
		l.openGap(e.Time)
	case "voice: connected":
		if !l.gapOpen.IsZero() {
			l.gaps = append(l.gaps, gap{l.gapOpen, e.Time})
			l.gapOpen = time.Time{}
		}
	case "voice_turn_failed":
		if e.Stage == "stt" {
			// No transcript to name it: the oldest utterance the bot has said nothing about.
			for _, u := range l.order {
				if u.outcome == "" && !u.spoken && !u.untranscribed && !u.end.IsZero() && u.end.Before(e.Time) {
					u.outcome, u.why = "explained", "stt_failed"
					break
				}
			}
			return
		}
	}
	u := l.byTranscript(e.Transcript)
	if u == nil || u.outcome != "" {
		return
	}
	switch {
	case e.Msg == "stt_pipeline_reply_spoken" || e.Msg == "realtime_reply_spoken":
		u.spoken = true
		l.checkHeard(u)
	case voiceExplained[e.Msg]:
		u.outcome, u.why = "explained", e.Msg
	}
}

func (l *ledger) openGap(at time.Time) {
	if l.gapOpen.IsZero() {
		l.gapOpen = at
	}
}

// byTranscript finds the utterance whose marker the transcript carries.
func (l *ledger) byTranscript(t string) *utterance {
	if t == "" {
		return nil
	}
	i := strings.LastIndex(t, "(voice ")
	if i < 0 {
		return nil
	}
	return l.voice[t[i:]]
}

// checkHeard marks a reply logged as spoken answered once the member heard it.
func (l *ledger) checkHeard(u *utterance) {
	if !u.spoken || u.outcome != "" || l.heard == nil {
		return
	}
	heard := l.heard()
	if u.heardCap >= 0 {
		heard = min(heard, u.heardCap)
	}
	if heard-u.heard0 >= minHeard {
		u.outcome, u.why = "answered", ""
	}
}

// inGap reports whether the bot had no voice connection while u was spoken.
func (l *ledger) inGap(u *utterance) bool {
	for _, g := range l.gaps {
		if !g.from.After(u.end) && !g.to.Before(u.start) {
			return true
		}
	}
	return !l.gapOpen.IsZero() && !l.gapOpen.After(u.end)
}

// tally is the ledger at one moment.
type tally struct {
	addressed, answered, explained int
	unexplained                    int // without an outcome for longer than the grace period
	pending                        int // without an outcome yet
	voice, vAnswered, vExplained   int
	vUnexplained, vPending         int
	faults                         int
	byFault                        map[string]int
	voiceWhy                       map[string]int // explained utterances by reason
}

// snapshot counts outcomes; one without an outcome counts as unexplained once older than
// grace.
func (l *ledger) snapshot(dsim *discordsim.Server, grace time.Duration) tally {
	replied := map[discordsim.MessageID]bool{}
	for _, m := range dsim.Sent() {
		if m.Author == dsim.BotID() && m.ReplyTo() != "" {
			replied[m.ReplyTo()] = true
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := tally{addressed: len(l.posted), voice: len(l.order), byFault: map[string]int{}, voiceWhy: map[string]int{}}
	for name, n := range l.faults {
		t.faults += n
		t.byFault[name] = n
	}
	var outcome func(id discordsim.MessageID, depth int) string
	outcome = func(id discordsim.MessageID, depth int) string {
		switch {
		case replied[id]:
			return "answered"
		case l.explained[id] != "":
			return "explained"
		case l.into[id] != "" && depth < 8:
			return outcome(l.into[id], depth+1) // answered (or not) with the turn it joined
		}
		return ""
	}
	for id, at := range l.posted {
		switch outcome(id, 0) {
		case "answered":
			t.answered++
		case "explained":
			t.explained++
		default:
			t.pending++
			if time.Since(at) > grace {
				t.unexplained++
			}
		}
	}
	for _, u := range l.order {
		l.checkHeard(u)
		if u.outcome == "" && u.untranscribed && l.inGap(u) {
			u.outcome, u.why = "explained", "no_voice_connection"
		}
		switch u.outcome {
		case "answered":
			t.vAnswered++
		case "explained":
			t.vExplained++
			t.voiceWhy[u.why]++
		default:
			t.vPending++
			if !u.end.IsZero() && time.Since(u.end) > grace {
				t.vUnexplained++
			}
		}
	}
	return t
}

// unexplainedVoice describes the utterances still without an outcome.
func (l *ledger) unexplainedVoice() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, u := range l.order {
		if u.outcome == "" {
			s := u.marker + " spoken " + u.start.Format(time.RFC3339Nano)
			if u.untranscribed {
				s += " (never transcribed)"
			}
			if u.spoken {
				s += " (logged spoken, not heard)"
			}
			out = append(out, s)
		}
	}
	return out
}
