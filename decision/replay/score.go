package replay

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/banterbot/banter/decision"
)

// Score tallies a labelled replay ("banter replay -labels"): every event
// that carries an "addressed" label is compared with Stage A's verdict.
//
// A turn counts as predicted addressed when its decision says the bot was
// addressed (DirectAddressed: a mention, a reply, a command, the name or an
// alias in an addressing position, or the direct-address classifier) or
// the voice classifier said YES. A turn left pending for a classifier
// (needs_classifier, replay without -llm) counts as not addressed in the
// precision and recall figures; the ones whose name matcher saw the name
// (a borderline turn, confidence > 0) are also counted apart, so the
// classifier's share of the work is visible.
type Score struct {
	all       Confusion
	pipelines map[string]*Confusion
	kinds     map[string]*Confusion
	signals   map[signalKey]*Confusion
	whys      map[string]*Confusion
	misses    []Miss
}

type signalKey struct {
	pipeline string
	signal   decision.Signal
}

// Confusion is a confusion table of addressed (positive) against not
// addressed, plus the turns left to a classifier.
type Confusion struct {
	TP, FP, FN, TN int
	// Pending counts turns left to a classifier (needs_classifier);
	// Borderline those of them in which the name (or a look-alike) was
	// seen, and BorderlineAddressed those labelled addressed.
	Pending, Borderline, BorderlineAddressed int
}

// Turns is the number of scored turns.
func (c Confusion) Turns() int { return c.TP + c.FP + c.FN + c.TN }

// Precision is TP/(TP+FP), or 1 when nothing was predicted addressed.
func (c Confusion) Precision() float64 {
	if c.TP+c.FP == 0 {
		return 1
	}
	return float64(c.TP) / float64(c.TP+c.FP)
}

// ClassifierShare is the share of the turns Stage A left to a classifier
// (Pending/Turns), 0 when there are none.
func (c Confusion) ClassifierShare() float64 {
	if c.Turns() == 0 {
		return 0
	}
	return float64(c.Pending) / float64(c.Turns())
}

// Recall is TP/(TP+FN), or 1 when nothing was labelled addressed.
func (c Confusion) Recall() float64 {
	if c.TP+c.FN == 0 {
		return 1
	}
	return float64(c.TP) / float64(c.TP+c.FN)
}

func (c *Confusion) add(label, predicted bool, d decision.Decision) {
	switch {
	case label && predicted:
		c.TP++
	case label:
		c.FN++
	case predicted:
		c.FP++
	default:
		c.TN++
	}
	if d.Outcome == decision.OutcomePending {
		c.Pending++
		if d.Confidence > 0 {
			c.Borderline++
			if label {
				c.BorderlineAddressed++
			}
		}
	}
}

// Miss is one misclassified turn.
type Miss struct {
	Pipeline  string
	Bot       string
	ID        string
	Why       string
	Addressed bool // the label
	Text      string
	Decision  decision.Decision
}

// NewScore returns an empty score.
func NewScore() *Score {
	return &Score{pipelines: map[string]*Confusion{}, kinds: map[string]*Confusion{}, signals: map[signalKey]*Confusion{}, whys: map[string]*Confusion{}}
}

// PredictedAddressed reports whether a Stage A decision counts as
// "addressed" for scoring.
func PredictedAddressed(d decision.Decision) bool {
	return d.DirectAddressed || d.Reason == decision.ReasonLLMYes
}

func tallyOf[K comparable](m map[K]*Confusion, k K) *Confusion {
	c := m[k]
	if c == nil {
		c = &Confusion{}
		m[k] = c
	}
	return c
}

// Add scores the decision d on the labelled event ev (bot is the name in
// force). Events without a label are ignored.
func (s *Score) Add(ev Event, bot string, d decision.Decision) {
	if ev.Addressed == nil {
		return
	}
	label, pred := *ev.Addressed, PredictedAddressed(d)
	p := d.Pipeline.String()
	s.all.add(label, pred, d)
	tallyOf(s.pipelines, p).add(label, pred, d)
	tallyOf(s.kinds, ev.Why).add(label, pred, d)
	tallyOf(s.signals, signalKey{p, d.Signal}).add(label, pred, d)
	tallyOf(s.whys, p+"/"+ev.Why).add(label, pred, d)
	if label != pred {
		text := ev.Content
		if ev.Type == TypeVoice {
			text = ev.Transcript
		}
		s.misses = append(s.misses, Miss{Pipeline: p, Bot: bot, ID: ev.ID, Why: ev.Why, Addressed: label, Text: text, Decision: d})
	}
}

// Pipeline returns the confusion table of "text" or "voice".
func (s *Score) Pipeline(name string) Confusion {
	if c := s.pipelines[name]; c != nil {
		return *c
	}
	return Confusion{}
}

// All returns the confusion table of every scored turn, both pipelines.
func (s *Score) All() Confusion { return s.all }

// Kind returns the confusion table of one label category ("why"), both
// pipelines.
func (s *Score) Kind(why string) Confusion {
	if c := s.kinds[why]; c != nil {
		return *c
	}
	return Confusion{}
}

// Misses returns the misclassified turns in input order.
func (s *Score) Misses() []Miss { return s.misses }

func sortedKeys[K comparable](m map[K]*Confusion, less func(a, b K) bool) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return less(keys[i], keys[j]) })
	return keys
}

// Write prints the report: precision, recall and the confusion table per
// pipeline, the same per addressing signal and per label category, then
// every misclassified turn with its decision.
func (s *Score) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PIPELINE\tTURNS\tPRECISION\tRECALL\tTP\tFP\tFN\tTN\tNEEDS_CLASSIFIER\tCLASSIFIER_SHARE\tBORDERLINE (NAME SEEN)\tBORDERLINE ADDRESSED")
	row := func(name string, c *Confusion) {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%d\t%d\t%d\t%d\t%d\t%.3f\t%d\t%d\n", name, c.Turns(), c.Precision(), c.Recall(),
			c.TP, c.FP, c.FN, c.TN, c.Pending, c.ClassifierShare(), c.Borderline, c.BorderlineAddressed)
	}
	for _, p := range sortedKeys(s.pipelines, func(a, b string) bool { return a < b }) {
		row(p, s.pipelines[p])
	}
	row("all", &s.all)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n(needs_classifier turns count as not addressed above: no classifier was asked)")

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PIPELINE\tSIGNAL\tTURNS\tLABELLED ADDRESSED\tTP\tFP\tFN\tTN\tPRECISION")
	for _, k := range sortedKeys(s.signals, func(a, b signalKey) bool {
		if a.pipeline != b.pipeline {
			return a.pipeline < b.pipeline
		}
		return a.signal < b.signal
	}) {
		c := s.signals[k]
		prec := "-"
		if c.TP+c.FP > 0 {
			prec = fmt.Sprintf("%.3f", c.Precision())
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", k.pipeline, k.signal, c.Turns(), c.TP+c.FN, c.TP, c.FP, c.FN, c.TN, prec)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHY\tTURNS\tADDRESSED\tPRECISION\tRECALL\tTP\tFP\tFN\tTN\tNEEDS_CLASSIFIER\tERRORS")
	for _, m := range []map[string]*Confusion{s.kinds, s.whys} {
		for _, k := range sortedKeys(m, func(a, b string) bool { return a < b }) {
			c := m[k]
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%d\t%d\t%d\t%d\t%d\t%d\n", k, c.Turns(), c.TP+c.FN, c.Precision(), c.Recall(),
				c.TP, c.FP, c.FN, c.TN, c.Pending, c.FP+c.FN)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n%d errors\n", len(s.misses))
	for _, m := range s.misses {
		label := "not addressed"
		if m.Addressed {
			label = "addressed"
		}
		d := m.Decision
		fmt.Fprintf(w, "%s %s [%s] labelled %s (%s), got %s %s %s %.2f: %q\n", m.Pipeline, m.ID, m.Bot, label, m.Why,
			d.Outcome, d.Reason, d.Signal, d.Confidence, oneLine(m.Text))
	}
	return nil
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ⏎ ") }
