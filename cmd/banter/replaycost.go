package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
)

// replayCost meters the model calls of `banter replay -cost` at the config's prices: the
// classifier's are charged to llm.directAddressClassifier, Stage B's to llm.
type replayCost struct {
	reg   *prometheus.Registry
	meter *llm.Meter
}

func newReplayCost(cfg *config.Config, log *slog.Logger) *replayCost {
	reg := prometheus.NewRegistry()
	return &replayCost{reg: reg, meter: newMeter(cfg, nil, log, reg)}
}

// classifierSlot and generatorSlot are the slots replay's calls are charged to.
const (
	replayClassifierSlot = "llm.directAddressClassifier"
	replayGeneratorSlot  = "llm"
)

// charge returns ctx charging its calls to slot.
func charge(ctx context.Context, slot string) context.Context { return llm.WithSlot(ctx, slot) }

// write prints what the replay's calls cost: the total, then by slot and model.
func (c *replayCost) write(w io.Writer) error {
	mfs, err := c.reg.Gather()
	if err != nil {
		return fmt.Errorf("replay: cost: %w", err)
	}
	type row struct {
		slot, model string
		usd         float64
	}
	var rows []row
	var total float64
	for _, mf := range mfs {
		if mf.GetName() != "banter_provider_cost_usd_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			r := row{usd: m.GetCounter().GetValue()}
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "slot":
					r.slot = l.GetValue()
				case "model":
					r.model = l.GetValue()
				}
			}
			rows = append(rows, r)
			total += r.usd
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].slot+rows[i].model < rows[j].slot+rows[j].model })
	if _, err := fmt.Fprintf(w, "cost: $%.6f at the configured prices\n", total); err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, "  %s %s: $%.6f\n", r.slot, r.model, r.usd); err != nil {
			return err
		}
	}
	return nil
}
