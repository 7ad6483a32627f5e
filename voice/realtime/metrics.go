package realtime

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the realtime bridge's Prometheus metrics. A nil *Metrics is a
// valid no-op; one Metrics serves every Bridge. Observing does not allocate
// (label values are resolved when the Metrics is built).
type Metrics struct {
	requested   [strategyCount]prometheus.Counter
	skipped     [strategyCount]prometheus.Counter
	reconnects  *prometheus.CounterVec
	interrupts  prometheus.Counter
	truncates   prometheus.Counter
	failed      prometheus.Counter
	frames      prometheus.Counter
	dropped     prometheus.Counter
	requestLat  prometheus.Histogram
	firstAudio  prometheus.Histogram
	firstFrame  prometheus.Histogram
	serverError prometheus.Counter
	gaveUps     *prometheus.CounterVec
	refused     prometheus.Counter
}

// NewMetricsFor is NewMetrics with every series labelled provider (openai, gemini): a process
// speaks one realtime API, so the label is constant and dashboards that sum keep working.
func NewMetricsFor(reg prometheus.Registerer, p Provider) *Metrics {
	if p == "" {
		p = ProviderOpenAI
	}
	if reg != nil {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"provider": string(p)}, reg)
	}
	return NewMetrics(reg)
}

// NewMetrics creates the metrics and registers them with reg (nil: not
// registered). Names:
//
//	banter_voice_realtime_replies_requested_total{strategy}  responses requested
//	banter_voice_realtime_replies_skipped_total{strategy}    turns not sent (denied, [SKIP], empty)
//	banter_voice_realtime_reconnects_total{cause}            drop, rollover, go_away, false_end
//	banter_voice_realtime_interruptions_total                replies cut (barge-in, leave, playback failure)
//	banter_voice_realtime_truncations_total                  conversation.item.truncate sent
//	banter_voice_realtime_responses_failed_total             response.done failed/incomplete or lost in a drop
//	banter_voice_realtime_server_errors_total                error events from the server
//	banter_voice_realtime_frames_sent_total                  Opus frames of model audio that went out
//	banter_voice_realtime_audio_dropped_bytes_total          model audio dropped (writer too far behind)
//	banter_voice_realtime_request_latency_seconds            end of the turn's speech → reply asked (response.create; Gemini: last input)
//	banter_voice_realtime_first_audio_seconds                reply asked → first Opus frame out
//	banter_voice_realtime_first_frame_seconds                first audio delta → first Opus frame out
//	banter_voice_realtime_gave_up_total{cause}               providers that stopped (stopped) or did not start (start_failed)
//	banter_voice_realtime_backoff_refused_total              replies refused without dialling during the back-off after a give-up
func NewMetrics(reg prometheus.Registerer) *Metrics {
	req := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "banter_voice_realtime_replies_requested_total",
		Help: "Realtime responses requested, by reply strategy.",
	}, []string{"strategy"})
	skip := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "banter_voice_realtime_replies_skipped_total",
		Help: "Turns answered with nothing (Stage A denied, [SKIP], empty reply), by reply strategy.",
	}, []string{"strategy"})
	m := &Metrics{
		reconnects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_realtime_reconnects_total",
			Help: "New realtime sessions after the first, by cause: drop (a dropped socket), rollover (planned), go_away (Gemini), false_end (Gemini: a fresh session after a false end).",
		}, []string{"cause"}),
		interrupts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_realtime_interruptions_total",
			Help: "Realtime replies cut before their end (barge-in, leave, playback failure).",
		}),
		truncates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_realtime_truncations_total",
			Help: "conversation.item.truncate commands sent after an interruption.",
		}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_realtime_responses_failed_total",
			Help: "Realtime responses that failed, ended incomplete or were lost with the socket.",
		}),
		serverError: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_realtime_server_errors_total",
			Help: "error events received from the realtime server.",
		}),
		frames: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_realtime_frames_sent_total",
			Help: "20 ms Opus frames of model audio that went out (the voice session's Playback).",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_realtime_audio_dropped_bytes_total",
			Help: "Bytes of model audio dropped because the reply's writer was more than 1024 deltas behind (or no reply was waiting for it).",
		}),
		requestLat: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "banter_voice_realtime_request_latency_seconds",
			Help:    "End of the turn's speech to the reply asked of the model (OpenAI: response.create sent; Gemini: the turn's last input sent).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		firstAudio: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "banter_voice_realtime_first_audio_seconds",
			Help:    "The reply asked of the model (OpenAI: response.create sent; Gemini: the turn's last input sent) to the first Opus frame handed to the voice connection.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 12),
		}),
		gaveUps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_realtime_gave_up_total",
			Help: "Realtime providers of a voice session that gave up (stopped: a close not worth retrying) or did not start (start_failed); each starts a back-off.",
		}, []string{"cause"}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_realtime_backoff_refused_total",
			Help: "Realtime replies refused without dialling, during the back-off after a give-up.",
		}),
		firstFrame: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "banter_voice_realtime_first_frame_seconds",
			Help:    "First audio delta of an item received to its first Opus frame handed out.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14),
		}),
	}
	for s := Strategy(1); s < strategyCount; s++ {
		m.requested[s] = req.WithLabelValues(s.String())
		m.skipped[s] = skip.WithLabelValues(s.String())
	}
	m.requested[StrategyUnknown] = req.WithLabelValues(StrategyUnknown.String())
	m.skipped[StrategyUnknown] = skip.WithLabelValues(StrategyUnknown.String())
	if reg != nil {
		reg.MustRegister(req, skip, m.reconnects, m.interrupts, m.truncates, m.failed, m.serverError,
			m.frames, m.dropped, m.requestLat, m.firstAudio, m.firstFrame, m.gaveUps, m.refused)
	}
	return m
}

func (m *Metrics) replyRequested(s Strategy) {
	if m != nil {
		m.requested[s.index()].Inc()
	}
}

func (m *Metrics) replySkipped(s Strategy) {
	if m != nil {
		m.skipped[s.index()].Inc()
	}
}

func (m *Metrics) reconnect(cause string) {
	if m != nil {
		m.reconnects.WithLabelValues(cause).Inc()
	}
}

func (m *Metrics) interrupted() {
	if m != nil {
		m.interrupts.Inc()
	}
}

func (m *Metrics) truncated() {
	if m != nil {
		m.truncates.Inc()
	}
}

func (m *Metrics) responseFailed() {
	if m != nil {
		m.failed.Inc()
	}
}

func (m *Metrics) serverErr() {
	if m != nil {
		m.serverError.Inc()
	}
}

func (m *Metrics) framesSent(n int) {
	if m != nil && n > 0 {
		m.frames.Add(float64(n))
	}
}

func (m *Metrics) audioDropped(n int) {
	if m != nil {
		m.dropped.Add(float64(n))
	}
}

func (m *Metrics) requestLatency(s float64) {
	if m != nil {
		m.requestLat.Observe(s)
	}
}

func (m *Metrics) firstAudioLatency(s float64) {
	if m != nil {
		m.firstAudio.Observe(s)
	}
}

func (m *Metrics) firstFrameLatency(s float64) {
	if m != nil {
		m.firstFrame.Observe(s)
	}
}

func (m *Metrics) gaveUp(cause string) {
	if m != nil {
		m.gaveUps.WithLabelValues(cause).Inc()
	}
}

func (m *Metrics) backoffRefused() {
	if m != nil {
		m.refused.Inc()
	}
}
