package decision

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts decisions. Build it with NewMetrics; a nil *Metrics is a
// no-op.
type Metrics struct {
	decisions          *prometheus.CounterVec
	classifierDuration *prometheus.HistogramVec
	nicknameIgnored    *prometheus.CounterVec
}

// NewMetrics registers the decision metrics with reg (nil: not registered):
//
//	banter_decisions_total{pipeline,stage,outcome,reason}
//	banter_decision_classifier_duration_seconds{pipeline,outcome}
//	banter_bot_nickname_ignored_total{pipeline,reason}
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
		nicknameIgnored: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_bot_nickname_ignored_total",
			Help: "Guild nicknames of the bot not used as a name, by pipeline and reason (no_words, too_few_letters, common_word): counted when a guild's nickname is first seen or changes, once per engine.",
		}, []string{"pipeline", "reason"}),
	}
	if reg != nil {
		reg.MustRegister(m.decisions, m.classifierDuration, m.nicknameIgnored)
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

// NicknameIgnored counts a guild nickname of the bot that is not used as a
// name (reason: NicknameNoWords, NicknameFewLetters, NicknameCommonWord).
func (m *Metrics) NicknameIgnored(pipeline, reason string) {
	if m == nil {
		return
	}
	m.nicknameIgnored.WithLabelValues(pipeline, reason).Inc()
}
