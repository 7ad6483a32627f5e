package voice

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/jitter"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/audio/wav"
	"github.com/banterbot/banter/discord/bots"
	dvoice "github.com/banterbot/banter/discord/voice"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/safety"
)

// sttResult is one chunk's transcript.
type sttResult struct {
	text string
	err  error
}

// speaker is one member's receive side: a Listener fed by the Service's hearing clock.
type speaker struct {
	s      *session
	userID string
	format pcm.Format
	// active mirrors Listener.Active for the session loop (room-aware
	// coalescing).
	active atomic.Bool

	// hints brings speculative turns' transcripts back (adaptive end of turn).
	hints chan specHint

	// owned by the hearing clock's goroutine
	l          *audio.Listener
	frames     <-chan dvoice.Frame
	chunks     []*sttFuture
	audio      []int16
	n          int
	bargeReply uint64
	bargeBase  time.Duration
	spec       *turn       // the speculative turn on the utterance in progress (speculation.go)
	stream     *spanStream // the utterance's transcription session (spans.go)
	tried      specKey     // the pause last speculated on
	// mode says whether the frames are heard (heard.go); a speaker who is not
	// heard has no Listener until it is. spurt and quiet follow a blocked
	// member's talk spurts (quiet ticks since the last packet, endTicks of them
	// end one); announced: voice_speaker_ignored was logged.
	mode      hearMode
	heard     *llm.Tally // what hearing the utterance in progress costs so far (turncost.go)
	kind      bots.Kind
	spurt     bool
	quiet     int
	endTicks  int
	announced bool

	// resolved is the kind the REST lookup found (a bots.Kind; lookUp), for a
	// speaker the gateway state did not know.
	resolved atomic.Uint32

	// False ends (falseend.go): the member's last turn that ended, when, and how many turns
	// had entered the conversation then; when the utterance in progress began; and the turn it
	// continues (cont, on utterance contUtt) after a false end.
	prev        *turn
	prevEnd     time.Time
	prevEntries uint64
	uttStart    time.Time
	cont        *turn
	contUtt     uint64
}

// listenerConfig maps voice.endpointing onto the audio pipeline.
func (s *session) listenerConfig() audio.ListenerConfig {
	c := s.svc.cfg().Voice.Endpointing
	v := vad.DefaultConfig()
	if c.SilenceMs > 0 {
		v.EndSilence = time.Duration(c.SilenceMs) * time.Millisecond
	}
	if c.MinUtteranceMs > 0 {
		v.MinUtterance = time.Duration(c.MinUtteranceMs) * time.Millisecond
	} else {
		v.MinUtterance = -1 // 0 in the config keeps every utterance (the VAD's own 0 means its default)
	}
	if c.MaxUtteranceMs > 0 {
		v.MaxUtterance = time.Duration(c.MaxUtteranceMs) * time.Millisecond
	}
	switch c.Detector {
	case "pitch":
		v.Algorithm = vad.AlgorithmSpeech
	case "energy":
		v.Algorithm = vad.AlgorithmEnergy
	default: // "neural"; config validation refuses anything else
		v.Algorithm = vad.AlgorithmNeural
	}
	return audio.ListenerConfig{Format: s.svc.opts.ListenFormat, VAD: v, DirectDecode: true}
}

// hear gives a new stream (a member started sending) to the Service's hearing clock, which
// serves it until the stream or the session ends. It runs on the session loop.
func (s *session) hear(st *dvoice.Stream) {
	sp := s.newSpeaker(st.UserID, st.Frames())
	if sp == nil {
		return
	}
	s.mu.Lock()
	s.speakers[st.UserID] = sp
	s.mu.Unlock()
	s.wg.Add(1) // done by leave, when the hearing clock lets go
	s.svc.hear.add(sp)
}

// newSpeaker makes the receive side of a user's stream of frames: what the user is comes from
// the gateway state (discord/bots), or, when the state does not know the user yet, from a REST
// lookup started now (lookUp). A speaker who is heard gets its Listener now, one who is not (a
// bot voice.hearBots leaves unheard, a blocked member) when it is. It returns nil when the
// Listener cannot be made.
func (s *session) newSpeaker(userID string, frames <-chan dvoice.Frame) *speaker {
	sp := &speaker{s: s, userID: userID, frames: frames, hints: make(chan specHint, 4)}
	sp.endTicks = max(1, int(s.listenerConfig().VAD.EndSilence/pcm.FrameDuration))
	if sp.kind = s.svc.bots.Kind(s.guildID, userID); sp.kind == bots.Unknown {
		s.wg.Go(sp.lookUp)
	}
	if sp.mode = sp.modeNow(); sp.mode == heard && sp.listen() != nil {
		return nil
	}
	return sp
}

// listen makes the speaker's Listener (voice.endpointing as it is now).
func (sp *speaker) listen() error {
	l, err := audio.NewListener(sp.s.listenerConfig(), sp.handle, sp.s.svc.opts.AudioMetrics)
	if err != nil {
		sp.s.logger().Error("voice_listener_failed", "user_id", sp.userID, "error", err)
		return fmt.Errorf("voice: listener for %s: %w", sp.userID, err)
	}
	sp.l, sp.format = l, l.Format()
	return nil
}

// leave ends the speaker's part in its session once the hearing clock dropped it.
func (sp *speaker) leave() {
	s := sp.s
	s.mu.Lock()
	if s.speakers[sp.userID] == sp {
		delete(s.speakers, sp.userID)
	}
	s.mu.Unlock()
	s.wg.Done()
}

// tick is the speaker's share of a hearing-clock tick: the frames that arrived since the last
// tick go through the Listener in one batch, its wall time advances by 20 ms, and barge-in is
// checked. It reports whether the speaker stays (false: its stream or its session ended). The
// frames of a speaker who is not heard (heard.go) are taken and dropped without decoding. It
// does not allocate.
func (sp *speaker) tick() bool {
	s := sp.s
	if s.ctx.Err() != nil {
		sp.retireSpans()
		return false
	}
	if m := sp.modeNow(); m != sp.mode && !sp.setMode(m) {
		sp.retireSpans()
		return false
	}
	n, open := sp.take()
	if !open {
		if sp.mode == heard {
			sp.l.Flush()
		}
		sp.ignore(0, true)
		sp.active.Store(false)
		sp.cancelSpec("stream_ended") // a Flush that confirmed it cleared it
		sp.retireSpans()
		return false
	}
	if sp.mode != heard {
		sp.ignore(n, false)
		return true
	}
	l := sp.l
	for more := true; more; { // speculative turns' transcripts (adaptive end of turn)
		select {
		case h := <-sp.hints:
			sp.onHint(l, h)
		default:
			more = false
		}
	}
	l.Tick()
	sp.active.Store(l.Active())
	s.checkBargeIn(sp, l)
	sp.watch(l)
	return true
}

// take takes the frames that arrived since the last tick: a heard speaker's go into the
// Listener's jitter buffer, the others' are only counted. It reports how many, and false once
// the stream has ended.
func (sp *speaker) take() (int, bool) {
	n := 0
	for {
		select {
		case f, ok := <-sp.frames:
			if !ok {
				return n, false
			}
			n++
			if sp.mode == heard {
				sp.l.Push(jitter.Packet{SSRC: f.SSRC, Seq: f.Sequence, Timestamp: f.Timestamp, Payload: f.Opus})
			}
		default:
			return n, true
		}
	}
}

// handle receives the Listener's endpointing events on the hearing clock (the speaker's tick): each chunk the
// endpointer cuts is transcribed at once, and the final one closes the utterance — unless a
// speculation already took this very audio at a pause (it is then confirmed, and it is the
// turn).
func (sp *speaker) handle(ev vad.Event) {
	s := sp.s
	switch ev.Kind {
	case vad.EventStart:
		sp.onStart(ev)
	case vad.EventSpeaking:
		sp.onSpeaking(ev)
	case vad.EventEnd:
		if sp.settle(ev) {
			sp.retireSpans()
			sp.chunks, sp.audio = nil, nil
			s.metrics.utterance()
			return
		}
		if sp.mode != heard || s.blocked(sp.userID) {
			// Not heard: permissions.blockedUserIds (ignored entirely, like their text
			// messages), or a bot voice.hearBots leaves unheard. No speech to text, no turn;
			// from the next tick on not even decoded.
			if ev.Final && sp.mode != unheardBot {
				s.droppedBlocked(sp.userID)
			}
			sp.chunks, sp.audio = nil, nil
			sp.retireSpans()
			return
		}
		chunk := slices.Clone(ev.Audio)
		sp.audio = append(sp.audio, chunk...)
		sp.chunks = append(sp.chunks, sp.transcribeSpans(ev.Utterance, ev.Chunk, chunk))
		if sp.stream != nil && (ev.Final || sp.stream.keyed) {
			sp.retireSpans() // this chunk's session is done; the next chunk opens its own
		}
		if ev.Final {
			sp.finish(ev)
		}
	case vad.EventDiscard:
		sp.settle(ev)
		if ev.Final {
			sp.retireSpans()
		}
		// A continuation that came to nothing still ends the turn it took over: that turn is
		// answered after all.
		switch {
		case ev.Final && sp.mode != heard: // the chunks of an utterance cut short unheard
			sp.chunks, sp.audio = nil, nil
		case ev.Final && (len(sp.chunks) > 0 || sp.continuing(ev.Utterance) != nil):
			sp.finish(ev)
		}
	}
}

// finish closes a complete utterance and starts its turn (runTurn); after a false end the turn
// continues the one its member went on with (its words come first: transcribe).
func (sp *speaker) finish(ev vad.Event) {
	s := sp.s
	end := s.svc.now()
	sp.n++
	t := newTurn(Turn{
		ID: fmt.Sprintf("u%s-%d", sp.userID, sp.n), GuildID: s.guildID, ChannelID: s.channel(),
		SpeakerID: sp.userID, SpeakerName: s.svc.name(s.guildID, sp.userID),
		Audio: sp.audio, Format: sp.format, SpeechEnd: end,
		Duration: time.Duration(len(sp.audio)) * time.Second / time.Duration(max(sp.format.Rate, 1)),
	}, sp.chunks)
	t.continues = sp.continuing(ev.Utterance)
	t.heard = sp.takeHeard()
	sp.chunks, sp.audio = nil, nil
	sp.ended(t, ev)
	s.metrics.utterance()
	s.wg.Go(func() { s.runTurn(t) })
}

// transcribeChunk runs speech to text on one chunk from an in-memory WAV.
// Its cost adds to heard (the utterance's).
func (s *session) transcribeChunk(samples []int16, f pcm.Format, heard *llm.Tally) sttResult {
	cfg := s.svc.cfg()
	body := wav.Encode(f, samples)
	tr, err := s.svc.opts.LLM.Transcribe(s.chargeTo(SlotTranscription, heard), cfg.Voice.STTPipeline.TranscriptionModel, body,
		llm.TranscribeOptions{Language: cfg.Voice.STTPipeline.Language, Prompt: s.sttPrompt(cfg.Bot.Name),
			Stream: cfg.Voice.STTPipeline.StreamTranscription})
	if err != nil {
		return sttResult{err: err}
	}
	return sttResult{text: tr.Text}
}

// droppedBlocked counts and logs an utterance of a blocked member, dropped unheard.
func (s *session) droppedBlocked(userID string) {
	s.metrics.drop(DropBlockedUser)
	s.logger().Debug("voice_transcript_dropped", "user_id", userID, "reason", DropBlockedUser.String())
}

// blocked reports whether permissions.blockedUserIds lists the user.
func (s *session) blocked(userID string) bool {
	return safety.BlockedIn(s.svc.cfg(), userID)
}

// checkBargeIn stops the bot when sp has spoken over it long enough (after
// the echo guard), as voice.bargeIn says. It runs on the hearing clock's goroutine.
func (s *session) checkBargeIn(sp *speaker, l *audio.Listener) {
	ar := s.cur.Load()
	if ar == nil || ar.interrupted.Load() {
		return
	}
	first := ar.firstPacket.Load()
	if first == 0 {
		return
	}
	if s.blocked(sp.userID) {
		return
	}
	bi := s.svc.cfg().Voice.BargeIn
	switch bi.Policy {
	case "none":
		return
	case "reply_target":
		if sp.userID != ar.target {
			return
		}
	}
	if s.svc.now().Sub(time.Unix(0, first)) < time.Duration(bi.EchoGuardMs)*time.Millisecond {
		return
	}
	speech := l.Speech()
	if sp.bargeReply != ar.id || speech < sp.bargeBase {
		// First look after the echo guard (or a new utterance): speech up
		// to here does not count as talking over the bot.
		sp.bargeReply, sp.bargeBase = ar.id, speech
		return
	}
	if !l.Speaking() {
		// Only confirmed speech interrupts (the detector's Speaking: a
		// voice, not a hum, music, typing or background chatter).
		return
	}
	min := time.Duration(max(bi.MinSpeechMs, 1)) * time.Millisecond
	if speech-sp.bargeBase >= min && ar.interrupted.CompareAndSwap(false, true) {
		ar.interruptedBy.Store(sp.userID)
		// Cancel first (no frame is queued after it), then drop the frames a send clock holds
		// ahead of their slots: what has played is then final.
		ar.cancel()
		s.playback.Interrupt()
		s.logger().Info("voice_barge_in", "user_id", sp.userID, "speech_ms", ms(speech-sp.bargeBase),
			"played_ms", ms(s.playback.Played()))
		s.metrics.bargeIn()
	}
}
