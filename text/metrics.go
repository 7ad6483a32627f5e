package text

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the text pipeline's Prometheus metrics. A nil *Metrics is a no-op.
type Metrics struct {
	ingestedTotal *prometheus.CounterVec
	shedTotal     *prometheus.CounterVec
	queueDepthG   prometheus.Histogram
	repliesTotal  *prometheus.CounterVec
	targetTotal   *prometheus.CounterVec
	phaseSeconds  *prometheus.HistogramVec
	fallbackTotal *prometheus.CounterVec
	catchUps      *prometheus.CounterVec
	catchUpMsgs   *prometheus.CounterVec
	invalidCalls  *prometheus.CounterVec
	images        *prometheus.CounterVec
	lookups       *prometheus.CounterVec
	turnsClosed   *prometheus.CounterVec
	turnsRecov    *prometheus.CounterVec
}

// NewMetrics registers the text metrics with reg (nil: not registered):
//
//	banter_text_messages_total{result}          ingested messages: stored, self, other_bot, blocked_user, channel_not_allowed, ban_word, forgotten
//	banter_text_turns_shed_total{addressed,reason} turns not answered: queue_full, displaced_by_addressed, shutting_down, forgotten
//	banter_text_queue_depth                     queue depth seen at each enqueue
//	banter_text_replies_total{outcome}          sent, placeholder, skipped, rate_limited, failed, apologized, denied, swamped,
//	                                            no_permission (the bot may not post there: no model asked), forbidden (send refused 403)
//	banter_reply_target_total{mode}             trigger_reply, target_reply, broadcast, fallback_broadcast
//	banter_text_phase_seconds{phase}            context, llm1, lookup, followup, send, total
//	banter_text_fallbacks_total{reason}         why a reply fell back to a broadcast
//	banter_text_catchups_total{reason,result}   per-channel catch-ups (startup, ready, resumed; done, failed, no_access)
//	banter_text_catchup_messages_total{reason}  missed messages a catch-up found and handled
//	banter_text_invalid_tool_calls_total{reason} tool calls of the model whose arguments could not be used
//	banter_text_images_total{result}            images of the conversation: inline, url, unavailable, refreshed
//	banter_text_lookups_total{lookup,outcome}   lookups the reply model asked for: ok, empty, invalid, failed, timeout, ignored
//	banter_text_durable_turns_closed_total{outcome} durable turns closed: sent, skipped, failed, explained
//	banter_text_durable_turns_recovered_total{result} open turns of an earlier process: requeued, already_answered, resumed (the rest of a reply in parts sent), expired, gone,
//	                                            no_permission (the bot may not post or read there), failed
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		ingestedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_text_messages_total", Help: "Messages seen by the text pipeline, by what happened to them."}, []string{"result"}),
		shedTotal:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_text_turns_shed_total", Help: "Admitted turns that will not be answered, by reason."}, []string{"addressed", "reason"}),
		queueDepthG:   prometheus.NewHistogram(prometheus.HistogramOpts{Name: "banter_text_queue_depth", Help: "Channel queue depth at enqueue.", Buckets: []float64{1, 2, 4, 8, 16, 32, 64}}),
		repliesTotal:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_text_replies_total", Help: "Reply attempts by outcome."}, []string{"outcome"}),
		targetTotal:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_reply_target_total", Help: "Sent replies by how they were targeted."}, []string{"mode"}),
		phaseSeconds:  prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "banter_text_phase_seconds", Help: "Latency of each reply phase.", Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 14)}, []string{"phase"}),
		fallbackTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_text_fallbacks_total", Help: "Replies that fell back to a plain channel message, by reason."}, []string{"reason"}),
		catchUps:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_text_catchups_total", Help: "Per-channel catch-ups (reason: guild_create, ready, resumed), by result (done, failed, no_access)."}, []string{"reason", "result"}),
		catchUpMsgs:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_text_catchup_messages_total", Help: "Missed messages found by catch-ups."}, []string{"reason"}),
		invalidCalls:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_text_invalid_tool_calls_total", Help: "Tool calls of the reply model whose arguments could not be used, by reason."}, []string{"reason"}),
		lookups:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_text_lookups_total", Help: "Lookups the reply model asked for (web_search, memory_lookup, image_lookup), by outcome."}, []string{"lookup", "outcome"}),
		images:        prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_text_images_total", Help: "Images of the conversation shown to the model (inline, url), unavailable, or refreshed over REST."}, []string{"result"}),
		turnsClosed:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_text_durable_turns_closed_total", Help: "Durable addressed turns closed in the store, by outcome."}, []string{"outcome"}),
		turnsRecov:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_text_durable_turns_recovered_total", Help: "Open turns left by an earlier process, by what became of them."}, []string{"result"}),
	}
	if reg != nil {
		reg.MustRegister(m.ingestedTotal, m.shedTotal, m.queueDepthG, m.repliesTotal, m.targetTotal, m.phaseSeconds, m.fallbackTotal, m.catchUps, m.catchUpMsgs, m.invalidCalls, m.images, m.lookups, m.turnsClosed, m.turnsRecov)
	}
	return m
}

func (m *Metrics) ingested(result string) {
	if m != nil {
		m.ingestedTotal.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) shed(addressed bool, reason string) {
	if m != nil {
		l := "false"
		if addressed {
			l = "true"
		}
		m.shedTotal.WithLabelValues(l, reason).Inc()
	}
}

func (m *Metrics) queueDepth(n int) {
	if m != nil {
		m.queueDepthG.Observe(float64(n))
	}
}

func (m *Metrics) reply(outcome string) {
	if m != nil {
		m.repliesTotal.WithLabelValues(outcome).Inc()
	}
}

func (m *Metrics) target(mode string) {
	if m != nil {
		m.targetTotal.WithLabelValues(mode).Inc()
	}
}

func (m *Metrics) fallback(reason string) {
	if m != nil {
		m.fallbackTotal.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) phase(name string, d time.Duration) {
	if m != nil {
		m.phaseSeconds.WithLabelValues(name).Observe(d.Seconds())
	}
}

func (m *Metrics) catchUp(reason, result string, found int) {
	if m != nil {
		m.catchUps.WithLabelValues(reason, result).Inc()
		m.catchUpMsgs.WithLabelValues(reason).Add(float64(found))
	}
}

func (m *Metrics) invalidToolCall(reason string) {
	if m != nil {
		m.invalidCalls.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) image(result string) {
	if m != nil {
		m.images.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) lookup(name, outcome string) {
	if m != nil {
		m.lookups.WithLabelValues(name, outcome).Inc()
	}
}

func (m *Metrics) turnClosed(outcome string, n int) {
	if m != nil {
		m.turnsClosed.WithLabelValues(outcome).Add(float64(n))
	}
}

func (m *Metrics) turnRecovered(result string) {
	if m != nil {
		m.turnsRecov.WithLabelValues(result).Inc()
	}
}
