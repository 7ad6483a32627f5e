package budget

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts what the budgets did to calls. A nil *Metrics counts nothing.
//
//	banter_budget_refused_calls_total{guild,slot}   calls refused at a cap (never sent)
//	banter_budget_fallback_calls_total{guild,slot}  calls sent to the slot's cheaper model
type Metrics struct {
	refusedCalls, fallbackCalls *prometheus.CounterVec
}

// NewMetrics registers the budget counters with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		refusedCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_budget_refused_calls_total",
			Help: "Model calls refused before they were sent because a daily budget's cap was reached, by guild and model slot.",
		}, []string{"guild", "slot"}),
		fallbackCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "banter_budget_fallback_calls_total",
			Help: "Model calls sent to the slot's cheaper fallback model past a budget's soft threshold, by guild and model slot.",
		}, []string{"guild", "slot"}),
	}
	if reg != nil {
		reg.MustRegister(m.refusedCalls, m.fallbackCalls)
	}
	return m
}

func (m *Metrics) refused(guild, slot string) {
	if m != nil {
		m.refusedCalls.WithLabelValues(guild, slot).Inc()
	}
}

func (m *Metrics) swapped(guild, slot string) {
	if m != nil {
		m.fallbackCalls.WithLabelValues(guild, slot).Inc()
	}
}

// gauges reports the day's budgets and spend from the ledger at each scrape, so every process
// reports the same figures (the shared ledger's):
//
//	banter_budget_guild_spent_usd{guild}   the day's spend of each guild that spent (guild "" : DMs)
//	banter_budget_guild_limit_usd{guild}   each capped guild's cap (the guilds that spent, and budget.guilds)
//	banter_budget_global_spent_usd         the day's spend of every guild together
//	banter_budget_global_limit_usd         budget.dailyUsd (absent without a global cap)
type gauges struct {
	g                                              *Guard
	guildSpent, guildLimit, globalSpent, globalLim *prometheus.Desc
}

// RegisterGauges registers the day's budget gauges of g with reg.
func RegisterGauges(reg prometheus.Registerer, g *Guard) {
	reg.MustRegister(&gauges{g: g,
		guildSpent:  prometheus.NewDesc("banter_budget_guild_spent_usd", "The budget day's spend of each guild, in US dollars (from the shared ledger).", []string{"guild"}, nil),
		guildLimit:  prometheus.NewDesc("banter_budget_guild_limit_usd", "Each capped guild's daily budget, in US dollars.", []string{"guild"}, nil),
		globalSpent: prometheus.NewDesc("banter_budget_global_spent_usd", "The budget day's spend of every guild together, in US dollars.", nil, nil),
		globalLim:   prometheus.NewDesc("banter_budget_global_limit_usd", "The daily budget of every guild together (budget.dailyUsd), in US dollars.", nil, nil),
	})
}

func (c *gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.guildSpent
	ch <- c.guildLimit
	ch <- c.globalSpent
	ch <- c.globalLim
}

func (c *gauges) Collect(ch chan<- prometheus.Metric) {
	b := &c.g.opts.Config().Budget
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := c.g.opts.Ledger.DaySpend(ctx, b.Day(c.g.opts.Now()))
	if err != nil {
		c.g.log.Warn("budget_unreadable", "error", err.Error())
		return
	}
	spent := map[string]float64{}
	var all float64
	for _, r := range rows {
		spent[r.Guild] += r.USD
		all += r.USD
	}
	guilds := map[string]bool{}
	for g := range spent {
		guilds[g] = true
	}
	for g := range b.Guilds {
		guilds[g] = true
	}
	for _, g := range slices.Sorted(maps.Keys(guilds)) {
		ch <- prometheus.MustNewConstMetric(c.guildSpent, prometheus.GaugeValue, spent[g], g)
		if limit := b.GuildCap(g); limit > 0 {
			ch <- prometheus.MustNewConstMetric(c.guildLimit, prometheus.GaugeValue, limit, g)
		}
	}
	ch <- prometheus.MustNewConstMetric(c.globalSpent, prometheus.GaugeValue, all)
	if b.DailyUSD > 0 {
		ch <- prometheus.MustNewConstMetric(c.globalLim, prometheus.GaugeValue, b.DailyUSD)
	}
}
