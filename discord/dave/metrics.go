package dave

import (
	"github.com/banterbot/banter/discord/dave/wire"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts DAVE session events. A nil *Metrics is a no-op.
type Metrics struct {
	transitions    prometheus.Counter
	invalidCommits prometheus.Counter
	decryptFails   prometheus.Counter
	malformedOps   *prometheus.CounterVec
	timeouts       *prometheus.CounterVec
	epochGauge     prometheus.Gauge
}

// NewMetrics registers the DAVE metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		transitions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_dave_transitions_total", Help: "DAVE transitions executed.",
		}),
		invalidCommits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_dave_invalid_commit_welcome_total", Help: "Commits or welcomes rejected (op 31 sent).",
		}),
		decryptFails: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_dave_decrypt_failures_total", Help: "Media frames that failed DAVE decryption.",
		}),
		malformedOps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_dave_gateway_errors_total", Help: "Gateway messages DAVE could not use, by opcode.",
		}, []string{"op"}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_dave_timeouts_total",
			Help: "Waits on the voice gateway that ran out: kind=transition (no op 22 after op 23: executed locally), kind=join (no Welcome after the key package: op 31 and a new key package).",
		}, []string{"kind"}),
		epochGauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "banter_dave_epoch", Help: "Current MLS epoch.",
		}),
	}
	reg.MustRegister(m.transitions, m.invalidCommits, m.decryptFails, m.malformedOps, m.timeouts, m.epochGauge)
	return m
}

func (m *Metrics) transition() {
	if m != nil {
		m.transitions.Inc()
	}
}

func (m *Metrics) invalid() {
	if m != nil {
		m.invalidCommits.Inc()
	}
}

func (m *Metrics) decryptFailure() {
	if m != nil {
		m.decryptFails.Inc()
	}
}

func (m *Metrics) malformed(op wire.Opcode) {
	if m != nil {
		m.malformedOps.WithLabelValues(op.String()).Inc()
	}
}

func (m *Metrics) timeout(kind string) {
	if m != nil {
		m.timeouts.WithLabelValues(kind).Inc()
	}
}

func (m *Metrics) epoch(e uint64) {
	if m != nil {
		m.epochGauge.Set(float64(e))
	}
}
