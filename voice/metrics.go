package voice

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Phase names one step of a voice turn, for the phase histogram.
type Phase uint8

// Phases of a turn, in order. Each is measured from the end of the
// end-of-speech silence (the moment endpointing closed the utterance).
const (
	PhaseUnknown Phase = iota
	// PhaseTranscript: the transcript is back.
	PhaseTranscript
	// PhaseAdmission: Stage A decided (after a classifier, if asked).
	PhaseAdmission
	// PhaseFirstToken: the first generated text delta arrived.
	PhaseFirstToken
	// PhaseFirstSentence: the first speakable chunk was cut.
	PhaseFirstSentence
	// PhaseFirstTTSByte: the first synthesized audio byte arrived.
	PhaseFirstTTSByte
	// PhaseFirstPacket: the first Opus packet was handed to the connection.
	PhaseFirstPacket
)

// String returns the phase's label value.
func (p Phase) String() string {
	switch p {
	case PhaseTranscript:
		return "transcript"
	case PhaseAdmission:
		return "admission"
	case PhaseFirstToken:
		return "first_token"
	case PhaseFirstSentence:
		return "first_sentence"
	case PhaseFirstTTSByte:
		return "first_tts_byte"
	case PhaseFirstPacket:
		return "first_packet"
	}
	return "unknown"
}

// Metrics are the voice conversation's Prometheus metrics. A nil *Metrics is
// valid and records nothing.
type Metrics struct {
	phase       *prometheus.HistogramVec
	turns       *prometheus.CounterVec
	dropped     *prometheus.CounterVec
	bargeIns    prometheus.Counter
	failures    *prometheus.CounterVec
	sessions    prometheus.Gauge
	sessionEnds *prometheus.CounterVec
	rejoins     *prometheus.CounterVec
	recovered   *prometheus.CounterVec
	moves       *prometheus.CounterVec
	utterances  prometheus.Counter
	framesSent  prometheus.Counter
	underruns   prometheus.Counter
	encryptSkip prometheus.Counter
	specs       *prometheus.CounterVec
	specSaved   prometheus.Histogram
	spanStreams *prometheus.CounterVec
	falseEnds   *prometheus.CounterVec
	// ignoredBot and ignoredBlocked are banter_voice_packets_ignored_total's series.
	ignoredBot, ignoredBlocked prometheus.Counter
}

// NewMetrics creates the metrics and registers them with reg (nil: not
// registered):
//
//	banter_voice_turn_phase_seconds{phase}     speech end → each phase
//	banter_voice_turns_total{outcome}          spoken, skipped, denied, deferred, interrupted, false_end, failed
//	banter_voice_transcripts_dropped_total{reason}
//	banter_voice_barge_ins_total
//	banter_voice_failures_total{stage}         stt, classifier, generation, tts, send
//	banter_voice_sessions                      sessions open
//	banter_voice_session_ends_total{reason}    left, shutdown, alone, max_session, disconnected, reconnect_timeout
//	banter_voice_rejoins_total{result}         kept sessions taken up at start: rejoined, already_in_voice,
//	                                           expired, guild_gone, channel_gone, no_permission, failed
//	banter_voice_turns_recovered_total{result} open turns a crash or shutdown left, taken by the guild's next
//	                                           session: requeued, in_conversation, expired, channel_changed, excluded
//	banter_voice_utterances_total
//	banter_voice_frames_sent_total             reply frames handed to the connection
//	banter_voice_frame_slots_skipped_total (audio not ready for a slot: underrun or stall)
//	banter_voice_frames_unencrypted_dropped_total (E2EE not ready yet)
//	banter_voice_speculations_total{outcome,stage}  used or discarded; transcript, decision or reply
//	banter_voice_speculation_saved_seconds     work of a used speculation done before the end of the turn
//	banter_voice_span_sessions_total{outcome}  transcription sessions: opened, refused, fell_back (a span failed: uploaded)
//	banter_voice_packets_ignored_total{reason} packets of speakers not heard, dropped undecoded: bot, blocked_user
//	banter_voice_false_ends_total{outcome,reason}  a member's confirmed speech soon after their turn ended:
//	                                           merged (before_reply, during_reply) or rejected (late, other_member, reply_done)
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		phase: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "banter_voice_turn_phase_seconds",
			Help:    "Time from the end of a voice turn's end-of-speech silence to each phase.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, .75, 1, 1.5, 2, 3, 5, 10},
		}, []string{"phase"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_turns_total", Help: "Voice turns by how they ended.",
		}, []string{"outcome"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_transcripts_dropped_total", Help: "Transcripts dropped before Stage A.",
		}, []string{"reason"}),
		bargeIns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_barge_ins_total", Help: "Replies interrupted by a member speaking over the bot.",
		}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_failures_total", Help: "Voice turn failures by stage.",
		}, []string{"stage"}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "banter_voice_sessions", Help: "Voice sessions open.",
		}),
		sessionEnds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_session_ends_total",
			Help: "Voice sessions ended, by reason: left (/leave, !leave, a move by command), shutdown (the process stopping), alone, max_session, disconnected (kicked from voice, channel deleted: close 4014/4022), reconnect_timeout, moved_afk (moved into the AFK channel), moved_no_speak (moved into a channel the bot may not speak in).",
		}, []string{"reason"}),
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_session_moves_total",
			Help: "Moves of the bot by someone else (a moderator) to another voice channel of the guild, by result: followed (the session goes on there), moved_afk, moved_no_speak (the session ends).",
		}, []string{"result"}),
		rejoins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_rejoins_total",
			Help: "Voice sessions joined by command and kept across a restart, as the next process took them up: rejoined, already_in_voice, expired (older than voice.maxSessionMinutes), guild_gone, channel_gone, no_permission (record dropped), failed (kept for the next start).",
		}, []string{"result"}),
		recovered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_turns_recovered_total",
			Help: "Utterances the bot was answering when its process crashed or stopped, taken by the guild's next voice session: requeued (answered again), in_conversation (its member gone: kept in the timeline), expired (older than 2 min), channel_changed, excluded (a blocked member or a ban word).",
		}, []string{"result"}),
		utterances: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_utterances_total", Help: "Utterances endpointed.",
		}),
		framesSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_frames_sent_total", Help: "Opus frames of replies sent.",
		}),
		underruns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_frame_slots_skipped_total", Help: "Reply frame slots skipped because audio was not ready in time (underrun or stall).",
		}),
		encryptSkip: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_frames_unencrypted_dropped_total", Help: "Reply frames dropped because E2EE had no key yet.",
		}),
		specs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_speculations_total",
			Help: "Turns started at a pause, before their end: used (the work, up to stage transcript, decision or reply, stood) or discarded (the speaker went on; stage: how far it had got).",
		}, []string{"outcome", "stage"}),
		specSaved: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "banter_voice_speculation_saved_seconds",
			Help:    "Work of a used speculation done before the end of its turn was confirmed (time the serial pipeline would still have needed).",
			Buckets: []float64{.025, .05, .1, .2, .3, .4, .5, .75, 1, 1.5, 2},
		}),
		spanStreams: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_span_sessions_total",
			Help: "Realtime transcription sessions of utterances (voice.speculation.transcription session): opened, refused (the utterance was uploaded), fell_back (a span failed and the words so far were uploaded).",
		}, []string{"outcome"}),
		falseEnds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_false_ends_total",
			Help: "A member's confirmed speech soon after banter ended their turn: merged (a false end: the answer stopped, the turn answered again as a whole; reason before_reply or during_reply) or rejected (a turn of its own; reason late, other_member or reply_done).",
		}, []string{"outcome", "reason"}),
	}
	ignored := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "banter_voice_packets_ignored_total",
		Help: "Incoming voice packets dropped before the decoder because their speaker is not heard, by reason: bot (a bot voice.hearBots and voice.hearBotIds leave unheard), blocked_user (permissions.blockedUserIds).",
	}, []string{"reason"})
	m.ignoredBot, m.ignoredBlocked = ignored.WithLabelValues(unheardBot.String()), ignored.WithLabelValues(blockedUser.String())
	if reg != nil {
		reg.MustRegister(m.phase, m.turns, m.dropped, m.bargeIns, m.failures, m.sessions, m.sessionEnds, m.rejoins, m.recovered, m.moves,
			m.utterances, m.framesSent, m.underruns, m.encryptSkip, m.specs, m.specSaved, m.spanStreams, m.falseEnds, ignored)
	}
	return m
}

// observePhase records a phase d after the end of the turn; a speculative turn's phases that
// were ready before that end count as 0.
func (m *Metrics) observePhase(p Phase, d time.Duration) {
	if m != nil {
		m.phase.WithLabelValues(p.String()).Observe(max(d, 0).Seconds())
	}
}

func (m *Metrics) speculation(outcome, stage string, saved time.Duration) {
	if m != nil {
		m.specs.WithLabelValues(outcome, stage).Inc()
		if outcome == "used" {
			m.specSaved.Observe(saved.Seconds())
		}
	}
}

func (m *Metrics) falseEnd(outcome, reason string) {
	if m != nil {
		m.falseEnds.WithLabelValues(outcome, reason).Inc()
	}
}

func (m *Metrics) spanSession(outcome string) {
	if m != nil {
		m.spanStreams.WithLabelValues(outcome).Inc()
	}
}

func (m *Metrics) turn(outcome string) {
	if m != nil {
		m.turns.WithLabelValues(outcome).Inc()
	}
}

func (m *Metrics) drop(r DropReason) {
	if m != nil {
		m.dropped.WithLabelValues(r.String()).Inc()
	}
}

func (m *Metrics) failure(stage string) {
	if m != nil {
		m.failures.WithLabelValues(stage).Inc()
	}
}

func (m *Metrics) bargeIn() {
	if m != nil {
		m.bargeIns.Inc()
	}
}

func (m *Metrics) sessionDelta(d float64) {
	if m != nil {
		m.sessions.Add(d)
	}
}

func (m *Metrics) sessionEnd(reason string) {
	if m != nil {
		m.sessionEnds.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) move(result string) {
	if m != nil {
		m.moves.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) rejoin(result string) {
	if m != nil {
		m.rejoins.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) recover(result string) {
	if m != nil {
		m.recovered.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) utterance() {
	if m != nil {
		m.utterances.Inc()
	}
}

func (m *Metrics) frame() {
	if m != nil {
		m.framesSent.Inc()
	}
}

func (m *Metrics) skipped(n int) {
	if m != nil {
		m.underruns.Add(float64(n))
	}
}

func (m *Metrics) unencrypted() {
	if m != nil {
		m.encryptSkip.Inc()
	}
}

// ignored counts n packets of a speaker who is not heard (mode: why).
func (m *Metrics) ignored(mode hearMode, n int) {
	if m == nil {
		return
	}
	switch mode {
	case unheardBot:
		m.ignoredBot.Add(float64(n))
	case blockedUser:
		m.ignoredBlocked.Add(float64(n))
	}
}
