package decision

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Letters whose other case has another byte length.
const (
	kelvin   = "\u212a" // KELVIN SIGN, folds to k (1 byte)
	ohm      = "\u2126" // OHM SIGN, folds to ω and Ω (2 bytes)
	capSharp = "ẞ"      // U+1E9E, folds to ß (2 bytes)
	dotI     = "İ"      // U+0130, folds to nothing else
)

// TestMatchTextFolding: names with letters whose other case has another length match
// case-insensitively (simple case folding) at the start, middle and end of a text, with
// punctuation, and report the span they matched in the text; a letter more is another word.
// A name with "İ" also matches its lower-case spelling ("ilkay").
func TestMatchTextFolding(t *testing.T) {
	tests := []struct {
		name, alias string
		in          string
		kind        MatchKind
		pos         Position
		alias_      bool
		word        string
	}{
		// İ: only itself (its lower case i folds to I).
		{"İlkay", "", "İlkay, bugün ne yapıyoruz?", MatchAddress, PositionLeading, false, "İlkay"},
		{"İlkay", "", "hey İLKAY what's up", MatchAddress, PositionGreeting, false, "İLKAY"},
		{"İlkay", "", "ok so İlkay, thoughts?", MatchAddress, PositionGreeting, false, "İlkay"},
		{"İlkay", "", "what do you think, İlkay?", MatchAddress, PositionVocative, false, "İlkay"},
		{"İlkay", "", "ẞ. İLKAY!", MatchAddress, PositionLeading, false, "İLKAY"},
		{"İlkay", "", "heyİlkay", MatchAddress, PositionMerged, false, "heyİlkay"},
		{"İlkay", "", "İlkaybot, selam", MatchAddress, PositionLeading, false, "İlkaybot"},
		{"İlkay", "", "I asked İlkay yesterday", MatchMention, PositionMention, false, "İlkay"},
		{"İlkay", "", "İlkaya gidiyoruz", MatchNone, PositionNone, false, ""},
		{"İlkay", "", "xİlkay, hi", MatchNone, PositionNone, false, ""},
		{"İlkay", "", "hey İlkayı, hi", MatchNone, PositionNone, false, ""},
		{"İlkay", "", "hey ilkay, hi", MatchAddress, PositionGreeting, false, "ilkay"}, // its lower-case spelling
		{"İlkay", "", "hey ILKAY, hi", MatchAddress, PositionGreeting, false, "ILKAY"},
		{"İlkay", "", "hey ılkay, hi", MatchNone, PositionNone, false, ""},
		{"ilkay", "", "hey İlkay, hi", MatchNone, PositionNone, false, ""}, // Turkish folding is not done
		// ẞ (3 bytes) and ß (2 bytes).
		{"Straße", "", "STRA" + capSharp + "E, wie geht's?", MatchAddress, PositionLeading, false, "STRA" + capSharp + "E"},
		{"STRA" + capSharp + "E", "", "hey straße", MatchAddress, PositionGreeting, false, "straße"},
		{"Straße", "", "thanks STRA" + capSharp + "E", MatchAddress, PositionGreeting, false, "STRA" + capSharp + "E"},
		{"Straße", "", "ich nehme die STRA" + capSharp + "ENBAHN", MatchNone, PositionNone, false, ""},
		{"Straße", "", "hey strasse", MatchNone, PositionNone, false, ""}, // full folding (ß = ss) is not done
		// K (KELVIN SIGN, 3 bytes) is k.
		{"Kai", "", "hey " + kelvin + "ai, you there?", MatchAddress, PositionGreeting, false, kelvin + "ai"},
		{"Kai", "", "so " + kelvin + "AI, what now", MatchAddress, PositionGreeting, false, kelvin + "AI"},
		{kelvin + "ai", "", "KAI, you there?", MatchAddress, PositionLeading, false, "KAI"},
		{"Kai", "", "thanks " + kelvin + "aizen", MatchNone, PositionNone, false, ""},
		{"banter", "Kai", "what do you think, " + kelvin + "ai?", MatchAddress, PositionVocative, true, kelvin + "ai"},
		// ſ (LONG S) is s.
		{"Sam", "", "hey ſam", MatchAddress, PositionGreeting, false, "ſam"},
		// Ω (OHM SIGN, 3 bytes) is ω and Ω (2 bytes).
		{"Ωmega", "", "what do you think, " + ohm + "MEGA?", MatchAddress, PositionVocative, false, ohm + "MEGA"},
		{ohm + "mega", "", "hey ωmega", MatchAddress, PositionGreeting, false, "ωmega"},
		{"Ωmega", "", "hey " + ohm + "megas", MatchNone, PositionNone, false, ""},
		// Multi-word names.
		{"banter", "Büyük İlkay", "hey BÜYÜK İLKAY, selam", MatchAddress, PositionGreeting, true, "BÜYÜK İLKAY"},
		{"banter", "Big " + kelvin + "ai", "big kai, play something", MatchAddress, PositionLeading, true, "big kai"},
		{"banter", "Big Kai", "big kaiser, play something", MatchNone, PositionNone, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name+"/"+tc.in, func(t *testing.T) {
			var m *NameMatcher
			if tc.alias != "" {
				m = NewNameMatcher(tc.name, tc.alias)
			} else {
				m = NewNameMatcher(tc.name)
			}
			matches := []NameMatch{m.MatchText(tc.in)}
			if tc.kind != MatchNone { // a transcript may also hear a look-alike ("strasse")
				matches = append(matches, m.MatchVoice(tc.in))
			}
			for _, got := range matches {
				if got.Kind != tc.kind || got.Position != tc.pos || got.Alias != tc.alias_ {
					t.Fatalf("match(%q) = %+v, want kind %v pos %v alias %v", tc.in, got, tc.kind, tc.pos, tc.alias_)
				}
				if got.Variant {
					t.Errorf("an exact name reported a variant: %+v", got)
				}
				if word := tc.in[got.Start:got.End]; word != tc.word {
					t.Errorf("matched %q, want %q", word, tc.word)
				}
			}
		})
	}
}

// TestFoldedNamesElsewhere: the other readers of names fold the same way: a
// nickname, the display names of people in the conversation, and the first
// names the voice engine hears addressed.
func TestFoldedNamesElsewhere(t *testing.T) {
	m := NewNameMatcher("banter").WithNickname("İlkay")
	if got := m.MatchText("İLKAY, naber?"); got.Kind != MatchAddress || !got.Nickname {
		t.Errorf("nickname İlkay in %q: %+v", "İLKAY, naber?", got)
	}
	for _, tc := range []struct {
		s, name string
		want    bool
	}{
		{"İlkay, can you hear me?", "İlkay Demir", true},
		{"hey " + kelvin + "ai!", "Kai", true},
		{"hey " + kelvin + "aix!", "Kai", false},
		{"STRA" + capSharp + "E, bist du da?", "~Straße (sie)", true},
	} {
		if got := addressesName(tc.s, tc.name); got != tc.want {
			t.Errorf("addressesName(%q, %q) = %v, want %v", tc.s, tc.name, got, tc.want)
		}
	}
	// "Kai Bob" is someone in the conversation: "Kai Bob, gg" is theirs.
	bm := NewNameMatcher("Kai")
	s := kelvin + "AI BOB, gg"
	nm := bm.MatchText(s)
	if nm.Kind == MatchNone {
		t.Fatalf("no match in %q", s)
	}
	if !memberNamed(s, nm, []Participant{{ID: "u2", Name: "Kai Bob"}}) {
		t.Errorf("memberNamed(%q) with Kai Bob around = false", s)
	}
	if memberNamed(s, nm, []Participant{{ID: "u2", Name: "Kai Bobby"}}) {
		t.Errorf("memberNamed(%q) with Kai Bobby around = true", s)
	}
}

func TestFoldHelpers(t *testing.T) {
	prefixes := []struct {
		s, prefix string
		want      int
	}{
		{"banter", "BAN", 3}, {"ban", "banter", -1}, {kelvin + "ai x", "kai", 5}, {"kai", kelvin + "AI", 3},
		{"straße", "STRA" + capSharp, 6}, {dotI + "lkay", "i", -1}, {"ωmega", ohm, 2}, {"", "", 0}, {"x", "", 0},
	}
	for _, tc := range prefixes {
		if got := foldPrefixLen(tc.s, tc.prefix); got != tc.want {
			t.Errorf("foldPrefixLen(%q, %q) = %d, want %d", tc.s, tc.prefix, got, tc.want)
		}
	}
	suffixes := []struct {
		s, suffix string
		want      int
	}{
		{"heybanter", "BANTER", 3}, {"ter", "banter", -1}, {"hey" + kelvin + "ai", "kai", 3}, {"heystraße", "STRA" + capSharp + "E", 3},
		{"hey" + dotI, "i", -1}, {"", "", 0},
	}
	for _, tc := range suffixes {
		if got := foldSuffixStart(tc.s, tc.suffix); got != tc.want {
			t.Errorf("foldSuffixStart(%q, %q) = %d, want %d", tc.s, tc.suffix, got, tc.want)
		}
	}
	bounds := []struct {
		s      string
		lo, hi int
	}{
		{"banter", 6, 6}, {"kai", 3, 5}, {"sam", 3, 4}, {"straße", 7, 9}, {dotI + "lkay", 6, 8}, {dotI, 2, 2}, {ohm, 2, 3}, {"\xff", 1, 1},
	}
	for _, tc := range bounds {
		if lo, hi := foldLenBounds(tc.s); lo != tc.lo || hi != tc.hi {
			t.Errorf("foldLenBounds(%q) = %d, %d; want %d, %d", tc.s, lo, hi, tc.lo, tc.hi)
		}
	}
	// The ASCII fast paths (foldLenBounds, foldsToASCII) know every rune that folds to ASCII.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < utf8.RuneSelf && r >= utf8.RuneSelf && !foldsToASCII(r) {
				t.Errorf("%q folds to ASCII %q: not in foldsToASCII", r, f)
			}
		}
		if r < utf8.RuneSelf {
			want := 1
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				want = max(want, utf8.RuneLen(f))
			}
			if lo, hi := foldLenBounds(string(r)); lo != 1 || hi != want {
				t.Errorf("foldLenBounds(%q) = %d, %d; want 1, %d", r, lo, hi, want)
			}
		}
	}
	anchors := []struct {
		name, anchor string
		ks           bool
	}{
		{"banter", "banter", false}, {"Kai", "kai", true}, {"İlkay", "lkay", true}, {"Ωmega", "mega", false},
		{"Zoë", "zo", false}, {"ジャービス", "", false}, {"Ωx", "", false}, {"b", "b", false}, {"Big J", "big", false},
	}
	for _, tc := range anchors {
		f := &NewNameMatcher(tc.name).forms[0]
		if f.anchor != tc.anchor || f.anchorKS != tc.ks {
			t.Errorf("name %q: anchor %q (k or s %v), want %q (%v)", tc.name, f.anchor, f.anchorKS, tc.anchor, tc.ks)
		}
	}
	if got := foldLower("STRA" + capSharp + "E " + dotI + "LKAY " + kelvin + ohm); got != "straße "+dotI+"lkay kω" {
		t.Errorf("foldLower = %q", got)
	}
}

// TestFoldedMatchNoAlloc: matching names with such letters allocates no more than ASCII ones.
func TestFoldedMatchNoAlloc(t *testing.T) {
	for _, c := range nameBenchCases {
		m := NewNameMatcher(c.name, "bant")
		if n := testing.AllocsPerRun(200, func() { m.MatchText(c.text) }); n != 0 {
			t.Errorf("MatchText(%q) with name %q: %v allocs, want 0", c.text, c.name, n)
		}
		if n := testing.AllocsPerRun(200, func() { m.MatchVoice(c.text) }); n != 0 {
			t.Errorf("MatchVoice(%q) with name %q: %v allocs, want 0", c.text, c.name, n)
		}
	}
	if n := testing.AllocsPerRun(200, func() { addressesName("hey "+kelvin+"ai!", "Kai") }); n != 0 {
		t.Errorf("addressesName: %v allocs, want 0", n)
	}
}

// foldVariant writes s with every rune that has another case form under
// simple folding replaced by the next one of its orbit that is as much a
// word rune as it (so the words stay the same words): "Kai" → "kAI"
// and, once more, "\u212aai".
func foldVariant(s string) string {
	var b strings.Builder
	for _, r := range s {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if isWordRune(f) == isWordRune(r) {
				r = f
				break
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

// FuzzFold: foldPrefixLen and foldSuffixStart agree with strings.EqualFold on the part
// they measure, and a fold variant of a string lies within its length bounds.
func FuzzFold(f *testing.F) {
	for _, s := range [][2]string{{"banter", "BAN"}, {kelvin + "ai x", "kai"}, {"straße", "STRA" + capSharp},
		{dotI + "lkay", "i"}, {"ωmega", ohm}, {"\xff\xfe", "\xfe"}, {"ſam", "S"}, {"", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, s, p string) {
		if n := foldPrefixLen(s, p); n >= 0 {
			if n > len(s) || !strings.EqualFold(s[:n], p) {
				t.Fatalf("foldPrefixLen(%q, %q) = %d: not a fold-equal prefix", s, p, n)
			}
		} else if utf8.ValidString(s) && utf8.ValidString(p) && strings.EqualFold(s, p) {
			t.Fatalf("foldPrefixLen(%q, %q) = -1 for fold-equal strings", s, p)
		}
		if i := foldSuffixStart(s, p); i >= 0 {
			if i > len(s) || !strings.EqualFold(s[i:], p) {
				t.Fatalf("foldSuffixStart(%q, %q) = %d: not a fold-equal suffix", s, p, i)
			}
		} else if utf8.ValidString(s) && utf8.ValidString(p) && strings.EqualFold(s, p) {
			t.Fatalf("foldSuffixStart(%q, %q) = -1 for fold-equal strings", s, p)
		}
		if !utf8.ValidString(s) {
			return
		}
		lo, hi := foldLenBounds(s)
		for v, i := s, 0; i < 3; i++ {
			v = foldVariant(v)
			if len(v) < lo || len(v) > hi || !strings.EqualFold(v, s) {
				t.Fatalf("fold variant %q of %q: length %d outside %d..%d (or not fold-equal)", v, s, len(v), lo, hi)
			}
		}
	})
}

// FuzzNameFold: any name, written with spaces around it, in any of its case forms, is found:
// the matcher may read it as an address or a mention, never as nothing, and the span it
// reports lies in the text.
func FuzzNameFold(f *testing.F) {
	for _, s := range []string{"banter", "İlkay", "STRA" + capSharp + "E", kelvin + "ai", "Ωmega", ohm + "mega", "Big J",
		"Büyük İlkay", "ſam", "R2-D2", "Zoë", "ジャービス", "a", "'bant'", "jarvis's", "x y z", "ǅemal", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		m := NewNameMatcher(name)
		if m.Empty() || !utf8.ValidString(name) {
			return
		}
		// The words of the name as the matcher compiled them, written with single spaces:
		// a multi-word name matches only so.
		f := &m.forms[0]
		if strings.Join(f.words, " ") != name && !strings.EqualFold(strings.Join(f.words, " "), name) {
			return
		}
		for v, i := name, 0; i < 3; i++ {
			s := " " + v + " "
			for _, got := range []NameMatch{m.MatchText(s), m.MatchVoice(s)} {
				if got.Kind == MatchNone {
					t.Fatalf("name %q: nothing found in %q", name, s)
				}
				if got.Start < 0 || got.End > len(s) || got.Start >= got.End {
					t.Fatalf("name %q: bad range %d..%d in %q", name, got.Start, got.End, s)
				}
			}
			v = foldVariant(v)
		}
	})
}
