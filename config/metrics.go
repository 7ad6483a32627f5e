package config

import "github.com/prometheus/client_golang/prometheus"

// Reload outcomes, the result label of banter_config_reloads_total.
const (
	ReloadApplied   = "applied"   // the new file is in force (restart-bound keys kept, if any)
	ReloadUnchanged = "unchanged" // the file says what is already running
	ReloadRejected  = "rejected"  // the file failed to load or validate: the running config stays
)

// ReloadMetrics counts the config watcher's reloads, so that a rejected edit shows on a
// dashboard and not only in the log. Build it with NewReloadMetrics; a nil *ReloadMetrics is a
// no-op.
type ReloadMetrics struct {
	reloads *prometheus.CounterVec
	lastOK  prometheus.Gauge
}

// NewReloadMetrics registers the reload metrics with reg (nil: not registered):
//
//	banter_config_reloads_total{result}
//	banter_config_last_reload_successful
func NewReloadMetrics(reg prometheus.Registerer) *ReloadMetrics {
	m := &ReloadMetrics{
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_config_reloads_total",
			Help: "Config reloads (file change or SIGHUP) by result: applied, unchanged, rejected (the running config kept).",
		}, []string{"result"}),
		lastOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "banter_config_last_reload_successful",
			Help: "1 when the config file loaded at start or at the last reload was valid, 0 while the last reload was rejected.",
		}),
	}
	m.lastOK.Set(1) // the running config was valid at start, or banter would not be running
	for _, r := range []string{ReloadApplied, ReloadUnchanged, ReloadRejected} {
		m.reloads.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.reloads, m.lastOK)
	}
	return m
}

// observe counts one reload with its result.
func (m *ReloadMetrics) observe(result string) {
	if m == nil {
		return
	}
	m.reloads.WithLabelValues(result).Inc()
	if result == ReloadRejected {
		m.lastOK.Set(0)
	} else {
		m.lastOK.Set(1)
	}
}
