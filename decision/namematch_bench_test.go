package decision

import "testing"

// nameBenchCases are the per-message matching workloads of BenchmarkNameMatch: ASCII names in
// ASCII chat (the common case), a text without the name (the pre-check's fast exit), and
// names with letters whose case forms differ in length ("İ", "ẞ", "Ω").
var nameBenchCases = []struct {
	name, text string
}{
	{"banter", "hey banter, what's the weather like today?"},
	{"banter", "so yesterday I went to the store and they were out of everything, no bread, no milk"},
	{"İlkay", "selam İLKAY, bugün hava nasıl?"},
	{"Straße", "hey STRAẞE, wie geht's?"},
	{"Ωmega", "what do you think, ωmega?"},
}

// BenchmarkNameMatch is the name matcher alone on one message, per case.
func BenchmarkNameMatch(b *testing.B) {
	for _, c := range nameBenchCases {
		m := NewNameMatcher(c.name, "bant")
		b.Run(c.name+"/"+c.text[:min(len(c.text), 12)], func(b *testing.B) {
			cpuPerOp(b, func() { m.MatchText(c.text) })
		})
	}
}
