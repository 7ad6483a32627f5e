package audio

import (
	"github.com/banterbot/banter/audio/jitter"
	"github.com/banterbot/banter/audio/vad"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the audio pipeline's Prometheus metrics. A nil *Metrics is
// valid and records nothing. One Metrics serves every Listener and Talker.
type Metrics struct {
	packets    *prometheus.CounterVec
	lost       prometheus.Counter
	concealed  prometheus.Counter
	malformed  prometheus.Counter
	utterances *prometheus.CounterVec
	encoded    prometheus.Counter
	encodeErrs prometheus.Counter

	// Children resolved once: the per-packet path does no label lookups.
	byResult [jitter.PushInvalid + 1]prometheus.Counter
	byEvent  [vad.EventDiscard + 1]prometheus.Counter
	chunked  prometheus.Counter
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		packets: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_audio_packets_total", Help: "Incoming Opus packets offered to jitter buffers, by result (accepted, restarted, duplicate, late, invalid).",
		}, []string{"result"}),
		lost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_audio_packets_lost_total", Help: "Incoming packets declared lost by the jitter buffers.",
		}),
		concealed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_audio_frames_concealed_total", Help: "20 ms frames synthesised by Opus loss concealment or FEC.",
		}),
		malformed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_audio_packets_malformed_total", Help: "Incoming packets the Opus decoder rejected (concealed instead).",
		}),
		utterances: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_audio_vad_events_total", Help: "Endpointer events by kind (start, speaking, end, discard, chunk).",
		}, []string{"kind"}),
		encoded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_audio_frames_encoded_total", Help: "Outgoing 20 ms Opus frames encoded.",
		}),
		encodeErrs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_audio_encode_errors_total", Help: "Outgoing frames the Opus encoder failed on.",
		}),
	}
	reg.MustRegister(m.packets, m.lost, m.concealed, m.malformed, m.utterances, m.encoded, m.encodeErrs)
	for r := jitter.PushAccepted; r <= jitter.PushInvalid; r++ {
		m.byResult[r] = m.packets.WithLabelValues(r.String())
	}
	for k := vad.EventStart; k <= vad.EventDiscard; k++ {
		m.byEvent[k] = m.utterances.WithLabelValues(k.String())
	}
	m.chunked = m.utterances.WithLabelValues("chunk")
	return m
}

func (m *Metrics) pushed(r jitter.PushResult) {
	if m != nil && r > jitter.PushUnknown && r <= jitter.PushInvalid {
		m.byResult[r].Inc()
	}
}

func (m *Metrics) addLost(n int) {
	if m != nil {
		m.lost.Add(float64(n))
	}
}

func (m *Metrics) conceal() {
	if m != nil {
		m.concealed.Inc()
	}
}

func (m *Metrics) malformedPacket() {
	if m != nil {
		m.malformed.Inc()
	}
}

func (m *Metrics) event(ev *vad.Event) {
	if m == nil || ev.Kind <= vad.EventUnknown || ev.Kind > vad.EventDiscard {
		return
	}
	if ev.Kind == vad.EventEnd && !ev.Final {
		m.chunked.Inc()
		return
	}
	m.byEvent[ev.Kind].Inc()
}

func (m *Metrics) encodedFrame(err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.encodeErrs.Inc()
		return
	}
	m.encoded.Inc()
}
