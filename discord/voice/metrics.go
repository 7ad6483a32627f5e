package voice

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// State is a voice connection's state, for the connections gauge.
type State int

// Connection states.
const (
	StateUnknown State = iota
	StateConnecting
	StateReady
	StateResuming
	StateClosed
)

// String returns the state's label value.
func (s State) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateReady:
		return "ready"
	case StateResuming:
		return "resuming"
	case StateClosed:
		return "closed"
	default:
		return "unknown"
	}
}

// Drop reasons for banter_voice_packets_dropped_total.
const (
	dropRTCP         = "rtcp"
	dropUnknownSSRC  = "unknown_ssrc"
	dropDuplicate    = "duplicate"
	dropTooOld       = "too_old"
	dropSlowConsumer = "slow_consumer"
	dropNotOpus      = "not_opus"
	dropShort        = "short" // ≤ 8 bytes: keepalive echoes and runts
	dropDiscovery    = "discovery"
)

// latenessBuckets are the upper bounds (seconds) of
// banter_voice_send_lateness_seconds: 2 ms is the transport's own pacing
// target, 5 ms the voice service's late-frame bar (the 0.5 % alert and the
// capacity bench).
func latenessBuckets() []float64 { return []float64{.001, .002, .005, .01, .02, .05} }

// Metrics are the voice transport's Prometheus metrics. A nil *Metrics is
// valid and records nothing. One Metrics serves all connections.
type Metrics struct {
	packetsIn       prometheus.Counter
	packetsOut      prometheus.Counter
	lost            prometheus.Counter
	decryptFailures *prometheus.CounterVec
	malformed       prometheus.Counter
	dropped         *prometheus.CounterVec
	reconnects      *prometheus.CounterVec
	connections     *prometheus.GaugeVec
	sendLateness    prometheus.Histogram
	sendSkipped     prometheus.Counter
	sendErrors      prometheus.Counter

	// Children resolved once, so the per-packet path does no label lookups.
	decryptTransport, decryptE2EE                                                  prometheus.Counter
	dropRTCP, dropUnknown, dropDup, dropOld, dropSlow, dropPT, dropShort, dropDisc prometheus.Counter
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		packetsIn: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_packets_in_total", Help: "UDP datagrams received on voice sockets.",
		}),
		packetsOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_packets_out_total", Help: "RTP packets sent.",
		}),
		lost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_packets_lost_total", Help: "Incoming RTP packets that never arrived (sequence gaps).",
		}),
		decryptFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_decrypt_failures_total", Help: "Incoming packets that failed authentication, by layer (transport or e2ee).",
		}, []string{"layer"}),
		malformed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_malformed_packets_total", Help: "Incoming datagrams that are not valid voice packets.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_packets_dropped_total", Help: "Valid incoming packets not delivered, by reason.",
		}, []string{"reason"}),
		reconnects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_voice_reconnects_total", Help: "Voice WebSocket closes that led to a reconnect attempt, by close code.",
		}, []string{"code"}),
		connections: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "banter_voice_connections", Help: "Voice connections by state.",
		}, []string{"state"}),
		sendLateness: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "banter_voice_send_lateness_seconds",
			Help: "How long after its 20 ms slot each RTP packet was handed to the kernel (every packet, reply and silence frames). " +
				"Packets late > 2 ms and > 5 ms: _count minus the le=\"0.002\" and le=\"0.005\" buckets.",
			Buckets: latenessBuckets(),
		}),
		sendSkipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_send_skipped_slots_total", Help: "20 ms send slots skipped after stalls, or with no frame queued (send clock).",
		}),
		sendErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "banter_voice_send_errors_total", Help: "RTP packets the send clock failed to write to the socket.",
		}),
	}
	reg.MustRegister(m.packetsIn, m.packetsOut, m.lost, m.decryptFailures, m.malformed, m.dropped,
		m.reconnects, m.connections, m.sendLateness, m.sendSkipped, m.sendErrors)
	m.decryptTransport = m.decryptFailures.WithLabelValues("transport")
	m.decryptE2EE = m.decryptFailures.WithLabelValues("e2ee")
	m.dropRTCP = m.dropped.WithLabelValues(dropRTCP)
	m.dropUnknown = m.dropped.WithLabelValues(dropUnknownSSRC)
	m.dropDup = m.dropped.WithLabelValues(dropDuplicate)
	m.dropOld = m.dropped.WithLabelValues(dropTooOld)
	m.dropSlow = m.dropped.WithLabelValues(dropSlowConsumer)
	m.dropPT = m.dropped.WithLabelValues(dropNotOpus)
	m.dropShort = m.dropped.WithLabelValues(dropShort)
	m.dropDisc = m.dropped.WithLabelValues(dropDiscovery)
	for _, s := range []State{StateConnecting, StateReady, StateResuming} {
		m.connections.WithLabelValues(s.String())
	}
	return m
}

func inc(c prometheus.Counter) { c.Inc() }

func (m *Metrics) in() {
	if m != nil {
		inc(m.packetsIn)
	}
}

func (m *Metrics) addLost(n int) {
	if m != nil && n > 0 {
		m.lost.Add(float64(n))
	}
}

func (m *Metrics) malformedPacket() {
	if m != nil {
		inc(m.malformed)
	}
}

func (m *Metrics) decryptFailed(e2ee bool) {
	if m == nil {
		return
	}
	if e2ee {
		inc(m.decryptE2EE)
	} else {
		inc(m.decryptTransport)
	}
}

func (m *Metrics) drop(reason string) {
	if m == nil {
		return
	}
	switch reason {
	case dropRTCP:
		inc(m.dropRTCP)
	case dropUnknownSSRC:
		inc(m.dropUnknown)
	case dropDuplicate:
		inc(m.dropDup)
	case dropTooOld:
		inc(m.dropOld)
	case dropSlowConsumer:
		inc(m.dropSlow)
	case dropNotOpus:
		inc(m.dropPT)
	case dropShort:
		inc(m.dropShort)
	case dropDiscovery:
		inc(m.dropDisc)
	}
}

func (m *Metrics) reconnect(code int) {
	if m != nil {
		m.reconnects.WithLabelValues(strconv.Itoa(code)).Inc()
	}
}

// sent counts a packet handed to the kernel late after its slot, after
// skipped empty slots.
func (m *Metrics) sent(skipped int, late time.Duration) {
	if m == nil {
		return
	}
	inc(m.packetsOut)
	if skipped > 0 {
		m.sendSkipped.Add(float64(skipped))
	}
	m.sendLateness.Observe(max(late, 0).Seconds())
}

func (m *Metrics) skippedSlots(n int) {
	if m != nil && n > 0 {
		m.sendSkipped.Add(float64(n))
	}
}

func (m *Metrics) sendFailed() {
	if m != nil {
		inc(m.sendErrors)
	}
}

// transition moves one connection from state from to state to.
func (m *Metrics) transition(from, to State) {
	if m == nil || from == to {
		return
	}
	if from != StateUnknown && from != StateClosed {
		m.connections.WithLabelValues(from.String()).Dec()
	}
	if to != StateUnknown && to != StateClosed {
		m.connections.WithLabelValues(to.String()).Inc()
	}
}
