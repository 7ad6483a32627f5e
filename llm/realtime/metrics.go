package realtime

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the realtime client's Prometheus metrics. A nil *Metrics is a
// valid no-op. Counting an event does not allocate.
type Metrics struct {
	connects      *prometheus.CounterVec
	eventsVec     *prometheus.CounterVec
	events        [numEventTypes]prometheus.Counter
	malformed     prometheus.Counter
	audioSent     prometheus.Counter
	audioReceived prometheus.Counter
}

// NewMetricsFor is NewMetrics with every series labelled provider ("openai", "gemini"). The
// banter_realtime_* families are every realtime provider's client's: llm/gemini counts on them
// too (Connect, Event, Malformed, AudioSent, AudioReceived), so a dashboard reads both alike.
func NewMetricsFor(reg prometheus.Registerer, provider string) *Metrics {
	if reg != nil {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"provider": provider}, reg)
	}
	return NewMetrics(reg)
}

// NewMetrics creates the metrics and registers them with reg (nil: not
// registered). Names:
//
//	banter_realtime_connects_total{outcome}        ok, refused, error, bad_config
//	banter_realtime_events_total{type}             well-formed server events by type
//	banter_realtime_malformed_events_total         server events dropped as malformed
//	banter_realtime_audio_sent_bytes_total         PCM bytes of member audio sent
//	banter_realtime_audio_received_bytes_total     PCM bytes of model audio received
func NewMetrics(reg prometheus.Registerer) *Metrics {
	events := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "banter_realtime_events_total",
		Help: "Realtime server events received, by type.",
	}, []string{"type"})
	m := &Metrics{
		eventsVec: events,
		connects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_realtime_connects_total",
			Help: "Realtime WebSocket connection attempts by outcome.",
		}, []string{"outcome"}),
		malformed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_realtime_malformed_events_total",
			Help: "Realtime server events that did not decode and were dropped.",
		}),
		audioSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_realtime_audio_sent_bytes_total",
			Help: "PCM bytes of member audio sent (OpenAI input_audio_buffer.append, Gemini realtimeInput.audio).",
		}),
		audioReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_realtime_audio_received_bytes_total",
			Help: "PCM bytes of model audio received (OpenAI response.output_audio.delta, Gemini serverContent inlineData).",
		}),
	}
	for t := EventType(0); t < numEventTypes; t++ {
		m.events[t] = events.WithLabelValues(t.String())
	}
	if reg != nil {
		reg.MustRegister(m.connects, events, m.malformed, m.audioSent, m.audioReceived)
	}
	return m
}

func (m *Metrics) observeConnect(outcome string) {
	if m != nil {
		m.connects.WithLabelValues(outcome).Inc()
	}
}

func (m *Metrics) observeEvent(ev *Event) {
	if m == nil || ev.Type >= numEventTypes {
		return
	}
	m.events[ev.Type].Inc()
	if ev.Type == EventOutputAudioDelta {
		m.audioReceived.Add(float64(len(ev.Audio)))
	}
}

func (m *Metrics) observeMalformed() {
	if m != nil {
		m.malformed.Inc()
	}
}

func (m *Metrics) observeAudioSent(n int) {
	if m != nil {
		m.audioSent.Add(float64(n))
	}
}

// Connect counts a connection attempt of another provider's client by outcome (ok, refused,
// error).
func (m *Metrics) Connect(outcome string) { m.observeConnect(outcome) }

// Event counts a well-formed server message of another provider's client by its type.
func (m *Metrics) Event(typ string) {
	if m != nil {
		m.eventsVec.WithLabelValues(typ).Inc()
	}
}

// Malformed counts a server message that did not decode.
func (m *Metrics) Malformed() { m.observeMalformed() }

// AudioSent counts PCM bytes of member audio sent.
func (m *Metrics) AudioSent(n int) { m.observeAudioSent(n) }

// AudioReceived counts PCM bytes of model audio received.
func (m *Metrics) AudioReceived(n int) {
	if m != nil {
		m.audioReceived.Add(float64(n))
	}
}
