package decision

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts decisions. Build it with NewMetrics; a nil *Metrics is a
// no-op.
type Metrics struct {
	decisions          *prometheus.CounterVec
	classifierDuration *prometheus.HistogramVec
}

// NewMetrics registers the decision metrics with reg (nil: not registered):
//
//	banter_decisions_total{pipeline,stage,outcome,reason}
//	banter_decision_classifier_duration_seconds{pipeline,outcome}
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_decisions_total",
			Help: "Reply decisions by pipeline (text, voice), stage (A, B), outcome and reason code.",
		}, []string{"pipeline", "stage", "outcome", "reason"}),
		classifierDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "banter_decision_classifier_duration_seconds",
			Help:    "Time spent in the reply/direct-address classifier per decision, all attempts.",
			Buckets: []float64{0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 5},
		}, []string{"pipeline", "outcome"}),
	}
	if reg != nil {
		reg.MustRegister(m.decisions, m.classifierDuration)
	}
	return m
}

// Observe counts one decision (and its classifier time, if any).
func (m *Metrics) Observe(d Decision) {
	if m == nil {
		return
	}
	m.decisions.WithLabelValues(d.Pipeline.String(), d.Stage.String(), d.Outcome.String(), d.Reason.String()).Inc()
	if d.ClassifierAttempts > 0 {
		m.classifierDuration.WithLabelValues(d.Pipeline.String(), d.Outcome.String()).Observe(d.ClassifierLatency.Seconds())
	}
}
