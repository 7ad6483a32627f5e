package replay

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/banterbot/banter/decision"
)

// stats accumulates the summary table.
type stats struct {
	bad      int
	channels map[string]*tally // channel id → tally
	reasons  map[reasonKey]*tally
	kinds    map[string]string // channel id → "text" | "voice"
	outcomes map[string]int    // text outcome event → admitted turns (with a generator)
}

type reasonKey struct {
	channel string
	reason  decision.Reason
}

type tally struct {
	events, allowed, denied, deferred, pending int
}

func newStats() stats {
	return stats{channels: map[string]*tally{}, reasons: map[reasonKey]*tally{}, kinds: map[string]string{}, outcomes: map[string]int{}}
}

func (t *tally) add(d decision.Decision) {
	t.events++
	switch d.Outcome {
	case decision.OutcomeAllow:
		t.allowed++
	case decision.OutcomeDefer:
		t.deferred++
	case decision.OutcomePending:
		t.pending++
	default:
		t.denied++
	}
}

func (s *stats) add(channel, kind string, d decision.Decision) {
	s.kinds[channel] = kind
	ct := s.channels[channel]
	if ct == nil {
		ct = &tally{}
		s.channels[channel] = ct
	}
	ct.add(d)
	k := reasonKey{channel, d.Reason}
	rt := s.reasons[k]
	if rt == nil {
		rt = &tally{}
		s.reasons[k] = rt
	}
	rt.add(d)
}

func share(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(of))
}

// write prints the summary: totals, then the admitted share by channel,
// by reason, and by channel and reason.
func (s *stats) write(w io.Writer) error {
	var total tally
	channels := make([]string, 0, len(s.channels))
	for ch, t := range s.channels {
		channels = append(channels, ch)
		total.events += t.events
		total.allowed += t.allowed
		total.denied += t.denied
		total.deferred += t.deferred
		total.pending += t.pending
	}
	sort.Strings(channels)
	fmt.Fprintf(w, "\nreplay summary: %d events, %d admitted (%s), %d denied, %d deferred, %d need a classifier, %d bad lines\n\n",
		total.events, total.allowed, share(total.allowed, total.events), total.denied, total.deferred, total.pending, s.bad)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANNEL\tPIPELINE\tEVENTS\tADMITTED\tDENIED\tDEFERRED\tPENDING\tADMITTED SHARE")
	for _, ch := range channels {
		t := s.channels[ch]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", ch, s.kinds[ch], t.events, t.allowed, t.denied, t.deferred, t.pending, share(t.allowed, t.events))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	byReason := map[decision.Reason]*tally{}
	for k, t := range s.reasons {
		r := byReason[k.reason]
		if r == nil {
			r = &tally{}
			byReason[k.reason] = r
		}
		r.events += t.events
		r.allowed += t.allowed
	}
	reasons := make([]decision.Reason, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool { return reasons[i].String() < reasons[j].String() })
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REASON\tEVENTS\tADMITTED\tSHARE OF ALL EVENTS")
	for _, r := range reasons {
		t := byReason[r]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", r, t.events, t.allowed, share(t.events, total.events))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	keys := make([]reasonKey, 0, len(s.reasons))
	for k := range s.reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].channel != keys[j].channel {
			return keys[i].channel < keys[j].channel
		}
		return keys[i].reason.String() < keys[j].reason.String()
	})
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANNEL\tREASON\tEVENTS\tADMITTED\tSHARE OF CHANNEL")
	for _, k := range keys {
		t := s.reasons[k]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", k.channel, k.reason, t.events, t.allowed, share(t.events, s.channels[k.channel].events))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	s.writeOutcomes(w)
	return nil
}
