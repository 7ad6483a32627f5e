package llm

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the llm package's Prometheus metrics. A nil *Metrics is a
// valid no-op.
type Metrics struct {
	requests   *prometheus.CounterVec   // op, model, outcome
	retries    *prometheus.CounterVec   // op, model, reason
	duration   *prometheus.HistogramVec // op, model
	firstToken *prometheus.HistogramVec // op, model
	firstByte  *prometheus.HistogramVec // op, model
	budgetWait *prometheus.HistogramVec // op, model
}

// latencyBuckets span 10 ms to ~40 s, the range of model calls.
var latencyBuckets = []float64{.01, .025, .05, .1, .2, .35, .5, .75, 1, 1.5, 2, 3, 5, 8, 13, 21, 40}

// NewMetrics creates the metrics and registers them with reg (nil: not
// registered, useful in tests). Names:
//
//	banter_llm_requests_total{op,model,outcome}          outcome: ok or an ErrorKind
//	banter_llm_retries_total{op,model,reason}
//	banter_llm_request_duration_seconds{op,model}        whole call incl. retries (streams: to the end)
//	banter_llm_time_to_first_token_seconds{op,model}     streaming generation
//	banter_llm_time_to_first_byte_seconds{op,model}      speech
//	banter_llm_budget_wait_seconds{op,model}             wait for a slot of the provider's request budget
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_llm_requests_total",
			Help: "OpenAI API calls by operation, model and outcome (ok or error kind).",
		}, []string{"op", "model", "outcome"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_llm_retries_total",
			Help: "Retried OpenAI API attempts by operation, model and error kind.",
		}, []string{"op", "model", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "banter_llm_request_duration_seconds",
			Help:    "Total duration of an OpenAI API call including retries.",
			Buckets: latencyBuckets,
		}, []string{"op", "model"}),
		firstToken: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "banter_llm_time_to_first_token_seconds",
			Help:    "Time from request start to the first text delta of a streamed generation.",
			Buckets: latencyBuckets,
		}, []string{"op", "model"}),
		firstByte: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "banter_llm_time_to_first_byte_seconds",
			Help:    "Time from request start to the first audio byte of speech.",
			Buckets: latencyBuckets,
		}, []string{"op", "model"}),
		budgetWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "banter_llm_budget_wait_seconds",
			Help:    "Wait of an OpenAI API attempt for a slot of its provider's request budget (llm.requestsPerMinute).",
			Buckets: latencyBuckets,
		}, []string{"op", "model"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.retries, m.duration, m.firstToken, m.firstByte, m.budgetWait)
	}
	return m
}

func (m *Metrics) observeCall(op Op, model string, err error, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(op.String(), model, outcome(err)).Inc()
	m.duration.WithLabelValues(op.String(), model).Observe(d.Seconds())
}

func (m *Metrics) observeRetry(op Op, model string, kind ErrorKind) {
	if m == nil {
		return
	}
	m.retries.WithLabelValues(op.String(), model, kind.String()).Inc()
}

func (m *Metrics) observeBudgetWait(op Op, model string, d time.Duration) {
	if m == nil {
		return
	}
	m.budgetWait.WithLabelValues(op.String(), model).Observe(d.Seconds())
}

func (m *Metrics) observeFirstToken(op Op, model string, d time.Duration) {
	if m == nil {
		return
	}
	m.firstToken.WithLabelValues(op.String(), model).Observe(d.Seconds())
}

func (m *Metrics) observeFirstByte(op Op, model string, d time.Duration) {
	if m == nil {
		return
	}
	m.firstByte.WithLabelValues(op.String(), model).Observe(d.Seconds())
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := err.(*APIError); ok {
		return e.Kind.String()
	}
	return ErrorKindUnknown.String()
}
