package voice

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/decision"
)

// Speculation: a turn's work starts at a pause, before the end of the utterance is confirmed.
//
// When a member has been silent for voice.speculation.pauseMs inside an utterance, their
// speaker's hearing-clock tick takes the chunk as it would end now (audio.Listener.Partial) and starts a
// speculative turn on it: the same runTurn as any turn. Its transcript comes back to the
// speaker (the adaptive end of turn: a complete question ends sooner, words that trail off
// wait longer) and goes to the session loop, which runs Stage A and opens a held reply when
// the bot is free (speculative.go): the generation and the first sentences' speech run while
// the member is still silent, with the audio held back.
//
//	hearing clock (speaker tick)                 session loop
//	pause ≥ pauseMs → start (Partial, STT)
//	transcript → adapt the end silence, proceed  Stage A → held reply (generate, TTS)
//	speech again → cancel ─────────────────────▶ discard: the reply is cut before a sound
//	end, same audio → confirm ──────────────────▶ the turn enters the conversation, the
//	                                             reply is released and plays at once
//
// "The same audio": the utterance ended with no speech frame after the pause (the EventEnd has
// the partial's utterance, chunk and speech end, so it carries the same samples, or those and
// more of the network's hold after the last word). Then the
// speculative transcript is the transcript of the turn, and what was built on it stands. Any
// speech after the pause, a chunk cut or a discard cancels it; a speculation is never spoken
// before its end is confirmed and never enters the conversation unless it is.

// specState is a speculation's standing with the speaker.
type specState uint8

// Speculation states: pending until the speaker confirms it (the end came with the same
// audio) or it is cancelled (speech again, or its transcription failed).
const (
	specPending specState = iota
	specConfirmed
	specCancelled
)

// specPhase is how far the session loop took a speculative turn (session loop only).
type specPhase uint8

// Phases, in order.
const (
	specUnseen      specPhase = iota // transcribing: the loop has not seen the turn yet
	specTranscribed                  // the transcript is in; waiting to proceed, or for the end
	specDeciding                     // speculative Stage A runs (the loop's Stage A slot is held)
	specDecided                      // decided (not a held reply); waiting for the end
	specReplying                     // a held reply generates and synthesises
	specCancelling                   // the held reply is being cut; its end is awaited
	specAbandoned                    // confirmed, but its held reply was not usable: the turn goes on as any turn
	specOver                         // settled: adopted into the normal path, or discarded
)

// speculation is a turn started at a pause.
type speculation struct {
	mu     sync.Mutex // guards state, reason, endAt
	state  specState
	reason string    // why it was cancelled
	endAt  time.Time // confirmed: the end of the end-of-speech silence

	// Fixed when it starts.
	started   time.Time     // the pause reached pauseMs
	utt       uint64        // the endpointer's utterance, chunk and speech end it covers
	chunk     int           //
	speechEnd time.Duration //
	samples   int           // length of the partial chunk
	hints     chan<- specHint

	// Set on the hearing clock before it tells the session loop anything
	// (a proceed or end event), read by the loop after.
	shape      turnShape
	endSilence time.Duration // the end silence the transcript set (0: unchanged)

	// Speaker goroutine only.
	lastSilence time.Duration // silence at the last look: less now means speech came back
	waitUntil   time.Duration // silence at which a trailing turn proceeds (0: not waiting)
	proceeded   bool

	// Set by the turn's goroutine before it enters the turn, read by the loop.
	transcribedAt time.Time

	// Session loop only.
	phase     specPhase
	proceedOK bool   // the speaker said Stage A and the reply may start
	lineSeq   uint64 // the conversation Stage A saw (session.lineSeq)
	vt        *decision.VoiceTurn
	d         decision.Decision
	decidedAt time.Time
	reply     *replyRun
	why       string        // discarded: why (the speaker's cancel, or a false end)
	stage     string        // used: how far the work the turn uses had got
	saved     time.Duration // used: that work's share done before the end of the turn
}

// specHint carries a speculative turn's transcript to its speaker (ok: the transcript is
// usable).
type specHint struct {
	t    *turn
	text string
	ok   bool
}

// specEvent tells the session loop that the speaker let a speculative turn proceed to Stage A
// and its reply, or (proceed false) that the turn was confirmed or cancelled.
type specEvent struct {
	t       *turn
	proceed bool
}

// get returns the state, the reason of a cancel and the confirmed end.
func (sp *speculation) get() (specState, string, time.Time) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.state, sp.reason, sp.endAt
}

// confirm settles a pending speculation as confirmed at end; false if it was cancelled.
func (sp *speculation) confirm(end time.Time) bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.state != specPending {
		return false
	}
	sp.state, sp.endAt = specConfirmed, end
	return true
}

// cancel settles a pending speculation as cancelled; false if it was already settled.
func (sp *speculation) cancel(reason string) bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.state != specPending {
		return false
	}
	sp.state, sp.reason = specCancelled, reason
	return true
}

// covers reports whether the utterance's end ev carries the speculation's audio: no speech
// came after the pause. The end's audio starts with the partial's and may run on with the
// network's hold after the member's last word (vad.Partial): what the network still heard
// after the pause, never a frame of the member's speech.
func (sp *speculation) covers(ev vad.Event) bool {
	return ev.Final && ev.Utterance == sp.utt && ev.Chunk == sp.chunk && ev.SpeechEnd == sp.speechEnd &&
		len(ev.Audio) >= sp.samples
}

// pauseTranscription reports whether a pause is transcribed at all: for speculative replies,
// or for the adaptive end of turn.
func pauseTranscription(c *config.Config) bool {
	e := c.Voice.Endpointing
	return c.Voice.Speculation.Enabled || e.CompleteSilenceMs > 0 || e.TrailingSilenceMs > 0
}

// watch runs on the hearing clock after every tick of the speaker: it starts a speculation at a pause,
// cancels it when speech comes back, and lets a trailing one proceed once the silence has
// lasted voice.endpointing.silenceMs.
func (sp *speaker) watch(l *audio.Listener) {
	s := sp.s
	if t := sp.spec; t != nil {
		sil := l.Silence()
		if sil < t.spec.lastSilence || !l.Active() {
			// Speech again (an utterance that ended was settled by handle): what the words so
			// far said about the end of the turn no longer holds.
			if l.Active() {
				sp.cancelSpec("speech_resumed")
				if t.spec.endSilence > 0 {
					l.SetEndSilence(time.Duration(s.svc.cfg().Voice.Endpointing.SilenceMs) * time.Millisecond)
				}
			}
			return
		}
		t.spec.lastSilence = sil
		if !t.spec.proceeded && t.spec.waitUntil > 0 && sil >= t.spec.waitUntil {
			sp.proceed(t)
		}
		return
	}
	if sp.stream == nil && l.Active() && s.spansWanted() && !s.blocked(sp.userID) {
		sp.openSpans() // the member started talking: their transcription session opens meanwhile
	}
	cfg := s.svc.cfg()
	if !l.Active() || !pauseTranscription(cfg) {
		return
	}
	if l.Silence() < time.Duration(max(cfg.Voice.Speculation.PauseMs, 20))*time.Millisecond {
		return
	}
	p, ok := l.Partial()
	key := specKey{p.Utterance, p.Chunk, p.SpeechEnd}
	if !ok || key == sp.tried || s.blocked(sp.userID) {
		return
	}
	sp.tried = key
	sp.startSpec(p, l.Silence())
}

// specKey names the pause a speculation was tried on (not tried twice).
type specKey struct {
	utt   uint64
	chunk int
	end   time.Duration
}

// startSpec starts a speculative turn on the partial chunk: its transcription at once, the
// rest on the turn's goroutine.
func (sp *speaker) startSpec(p vad.Partial, silence time.Duration) {
	s := sp.s
	chunk := slices.Clone(p.Audio)
	f := sp.transcribeSpans(p.Utterance, p.Chunk, chunk)
	sp.n++
	all := append(slices.Clone(sp.audio), chunk...)
	t := newTurn(Turn{
		ID: fmt.Sprintf("u%s-%d", sp.userID, sp.n), GuildID: s.guildID, ChannelID: s.channel(),
		SpeakerID: sp.userID, SpeakerName: s.svc.name(s.guildID, sp.userID), Audio: all, Format: sp.format,
		Duration: time.Duration(len(all)) * time.Second / time.Duration(max(sp.format.Rate, 1)),
	}, append(slices.Clone(sp.chunks), f))
	t.continues = sp.continuing(p.Utterance)
	t.heard = sp.heardTally()
	t.spec = &speculation{started: s.svc.now(), utt: p.Utterance, chunk: p.Chunk, speechEnd: p.SpeechEnd,
		samples: len(chunk), hints: sp.hints, lastSilence: silence}
	sp.spec = t
	s.logger().Debug("voice_speculation_started", "turn_id", t.ID, "user_id", sp.userID, "pause_ms", ms(silence),
		"audio_ms", t.Duration.Milliseconds())
	s.wg.Go(func() { s.runTurn(t) })
}

// settle resolves the speculation at the end of the utterance: confirmed when ev carries the
// same audio (it reports true: the turn is already on its way), cancelled otherwise.
func (sp *speaker) settle(ev vad.Event) bool {
	t := sp.spec
	if t == nil {
		return false
	}
	if t.spec.covers(ev) && t.spec.confirm(sp.s.svc.now()) {
		sp.spec = nil
		sp.ended(t, ev)
		toLoop(sp.s, sp.s.specEvents, specEvent{t: t})
		return true
	}
	switch {
	case ev.Kind == vad.EventDiscard:
		sp.cancelSpec("noise")
	case !ev.Final:
		sp.cancelSpec("chunk_cut")
	default:
		sp.cancelSpec("audio_changed")
	}
	return false
}

// cancelSpec cancels the speaker's speculation and tells the session loop.
func (sp *speaker) cancelSpec(reason string) {
	t := sp.spec
	sp.spec = nil
	if t != nil && t.spec.cancel(reason) {
		toLoop(sp.s, sp.s.specEvents, specEvent{t: t})
	}
}

// proceed lets the speculative turn go on to Stage A and its held reply.
func (sp *speaker) proceed(t *turn) {
	t.spec.proceeded = true
	if sp.s.svc.cfg().Voice.Speculation.Enabled {
		toLoop(sp.s, sp.s.specEvents, specEvent{t: t, proceed: true})
	}
}

// onHint takes a speculative turn's transcript (hearing clock): the adaptive end of turn
// moves the end silence by the shape of the words so far, and the turn proceeds at once, or,
// when they trail off, once the silence has lasted voice.endpointing.silenceMs.
func (sp *speaker) onHint(l *audio.Listener, h specHint) {
	t := sp.spec
	if t != h.t || !h.ok {
		return // settled meanwhile, or nothing to go on
	}
	e := sp.s.svc.cfg().Voice.Endpointing
	t.spec.shape = shapeOf(h.text)
	switch t.spec.shape {
	case shapeComplete:
		if e.CompleteSilenceMs > 0 {
			t.spec.endSilence = time.Duration(min(e.CompleteSilenceMs, e.SilenceMs)) * time.Millisecond
		}
	case shapeTrailing:
		if e.TrailingSilenceMs > e.SilenceMs {
			t.spec.endSilence = time.Duration(e.TrailingSilenceMs) * time.Millisecond
			t.spec.waitUntil = time.Duration(e.SilenceMs) * time.Millisecond
		}
	}
	if t.spec.endSilence > 0 {
		l.SetEndSilence(t.spec.endSilence)
	}
	sp.s.logger().Debug("voice_end_adapted", "turn_id", t.ID, "user_id", sp.userID, "turn_shape", t.spec.shape.String(),
		"end_silence_ms", t.spec.endSilence.Milliseconds(), "silence_ms", ms(l.Silence()), "jitter_hold_ms", ms(l.JitterHold()))
	if t.spec.waitUntil > 0 && l.Silence() < t.spec.waitUntil {
		return // proceeds in watch
	}
	sp.proceed(t)
}
