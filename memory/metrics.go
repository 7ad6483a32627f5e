package memory

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the memory metrics. A nil *Metrics is a no-op.
type Metrics struct {
	extractions *prometheus.CounterVec
	messages    *prometheus.CounterVec
	facts       *prometheus.CounterVec
	embeddings  *prometheus.CounterVec
	refused     *prometheus.CounterVec
	backfill    *prometheus.CounterVec
	stops       *prometheus.CounterVec
	resumes     prometheus.Counter
}

// NewMetrics registers the memory metrics with reg (nil: not registered):
//
//	banter_memory_extractions_total{outcome}          extraction calls: ok, invalid (answer refused), failed
//	banter_memory_extracted_messages_total{outcome}   the messages of those calls
//	banter_memory_facts_total{outcome}                facts of valid answers: added, merged, superseded, locked, source_gone, ban_word, target_gone, forgotten, failed
//	banter_memory_forget_refused_total{what}          writes refused because their member ran forget-me after the words: message, fact
//	banter_memory_embedded_texts_total{what,outcome}  texts sent to the embeddings model: messages, facts, query; ok or failed
//	banter_memory_backfill_texts_total{what,outcome}  of those, the backfill's: messages, facts; embedded or failed
//	banter_memory_backfill_stops_total{reason}        a guild's backfill pass stopped before it was done: budget, failed, lease, off
//	banter_memory_requeued_messages_total              stored messages queued again for extraction after a process stopped before extracting them
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		extractions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_memory_extractions_total", Help: "Memory extraction calls by outcome (ok, invalid, failed)."}, []string{"outcome"}),
		messages:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_memory_extracted_messages_total", Help: "Messages sent to memory extraction, by the call's outcome."}, []string{"outcome"}),
		facts:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_memory_facts_total", Help: "Facts of valid extraction answers, by what became of them."}, []string{"outcome"}),
		embeddings:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_memory_embedded_texts_total", Help: "Texts sent to the embeddings model (messages, facts, query), by the call's outcome."}, []string{"what", "outcome"}),
		refused:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_memory_forget_refused_total", Help: "Memory writes refused because their member ran /memory forget-me after the words were said (message, fact)."}, []string{"what"}),
		backfill:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_memory_backfill_texts_total", Help: "Texts the embedding backfill sent to the embeddings model (messages, facts), by outcome (embedded, failed)."}, []string{"what", "outcome"}),
		stops:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "banter_memory_backfill_stops_total", Help: "Guild passes of the embedding backfill stopped before they were done, by reason (budget, failed, lease, off)."}, []string{"reason"}),
		resumes:     prometheus.NewCounter(prometheus.CounterOpts{Name: "banter_memory_requeued_messages_total", Help: "Stored messages queued again for extraction because the process that queued them stopped before extracting them."}),
	}
	if reg != nil {
		reg.MustRegister(m.extractions, m.messages, m.facts, m.embeddings, m.refused, m.backfill, m.stops, m.resumes)
	}
	return m
}

func (m *Metrics) extraction(outcome string, messages int) {
	if m == nil {
		return
	}
	m.extractions.WithLabelValues(outcome).Inc()
	m.messages.WithLabelValues(outcome).Add(float64(messages))
}

func (m *Metrics) fact(outcome string) {
	if m == nil {
		return
	}
	m.facts.WithLabelValues(outcome).Inc()
}

func (m *Metrics) embedding(what, outcome string, texts int) {
	if m == nil {
		return
	}
	m.embeddings.WithLabelValues(what, outcome).Add(float64(texts))
}

func (m *Metrics) forgetRefused(what string) {
	if m == nil {
		return
	}
	m.refused.WithLabelValues(what).Inc()
}

func (m *Metrics) backfilled(what, outcome string, texts int) {
	if m == nil {
		return
	}
	m.backfill.WithLabelValues(what, outcome).Add(float64(texts))
}

func (m *Metrics) backfillStop(reason string) {
	if m == nil {
		return
	}
	m.stops.WithLabelValues(reason).Inc()
}

func (m *Metrics) resumed(messages int) {
	if m == nil {
		return
	}
	m.resumes.Add(float64(messages))
}
