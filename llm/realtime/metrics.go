package realtime

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the realtime client's Prometheus metrics. A nil *Metrics is a
// valid no-op. Counting an event does not allocate.
type Metrics struct {
	connects      *prometheus.CounterVec
	events        [numEventTypes]prometheus.Counter
	malformed     prometheus.Counter
	audioSent     prometheus.Counter
	audioReceived prometheus.Counter
}

// NewMetrics creates the metrics and registers them with reg (nil: not
// registered). Names:
//
//	banter_realtime_connects_total{outcome}        ok, refused, error, bad_config
//	banter_realtime_events_total{type}             well-formed server events by type
//	banter_realtime_malformed_events_total         server events dropped as malformed
//	banter_realtime_audio_sent_bytes_total         PCM bytes appended
//	banter_realtime_audio_received_bytes_total     PCM bytes of output audio deltas
func NewMetrics(reg prometheus.Registerer) *Metrics {
	events := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "banter_realtime_events_total",
		Help: "Realtime server events received, by type.",
	}, []string{"type"})
	m := &Metrics{
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
			Help: "PCM bytes sent with input_audio_buffer.append.",
		}),
		audioReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_realtime_audio_received_bytes_total",
			Help: "PCM bytes received in response.output_audio.delta events.",
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
