package decision

import (
	"testing"
)

func TestMatchText(t *testing.T) {
	m := NewNameMatcher("banter", "bant", "Big B")
	tests := []struct {
		name     string
		in       string
		kind     MatchKind
		pos      Position
		alias    bool
		minConf  float64
		wantWord string
	}{
		// Positives.
		{"greeting comma", "hey banter, what's the weather like today?", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"leading comma", "banter, tell us a joke", MatchAddress, PositionLeading, false, 0.9, "banter"},
		{"leading no comma", "banter tell us a joke", MatchAddress, PositionLeading, false, 0.8, "banter"},
		{"capitalised", "Hey Banter!", MatchAddress, PositionGreeting, false, 0.9, "Banter"},
		{"greeting no comma", "yo banter what's up", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"two greetings", "ok so banter, thoughts?", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"thank you", "thank you banter", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"vocative end", "what do you think, banter?", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"vocative mid", "I wonder, banter, if you know", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"second sentence", "I'm bored. banter, tell me something", MatchAddress, PositionLeading, false, 0.9, "banter"},
		{"new line", "lol\nbanter what time is it", MatchAddress, PositionLeading, false, 0.8, "banter"},
		{"plain at", "can @banter help here", MatchAddress, PositionAt, false, 0.9, "banter"},
		{"merged", "heybanter what's new", MatchAddress, PositionMerged, false, 0.85, "heybanter"},
		{"merged yo", "yobanter", MatchAddress, PositionMerged, false, 0.85, "yobanter"},
		{"dash", "banter — quick question", MatchAddress, PositionLeading, false, 0.9, "banter"},
		{"alias", "hey bant, you there?", MatchAddress, PositionGreeting, true, 0.9, "bant"},
		{"multiword alias", "big b, play something", MatchAddress, PositionLeading, true, 0.9, "big b"},
		{"unicode punctuation", "hi banter… are you awake", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		// Clause-final and interrupting vocatives without a comma.
		{"thanks end", "thanks banter", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"good morning", "good morning banter", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"thank you so much", "thank you so much banter", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"question end", "can you hear me banter", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"statement end", "I need a hand here banter", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"thanks clause", "thanks for the help banter", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"imperative clause", "tell us a story banter", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"praise", "good call banter", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"predicate", "you're funny banter", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"what's up", "what's up banter", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"interrupting", "I need a hand here banter can you check", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"wh object", "what did you say banter", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"stranded like", "what's the weather like banter", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"trailing lol", "where are my keys banter lol", MatchAddress, PositionVocative, false, 0.85, "banter"},
		{"hola", "hola banter", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"olá", "Olá banter, tudo bem?", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"selam", "selam banter, nasılsın?", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"günaydın", "Günaydın banter", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"günaydin", "Günaydin banter", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"günaydın in capitals", "GÜNAYDIN BANTER", MatchAddress, PositionGreeting, false, 0.9, "BANTER"},
		{"olá in capitals", "OLÁ BANTER", MatchAddress, PositionGreeting, false, 0.9, "BANTER"},
		{"sağol", "sağol banter", MatchAddress, PositionGreeting, false, 0.9, "banter"},
		{"sağol in capitals", "SAĞOL BANTER", MatchAddress, PositionGreeting, false, 0.9, "BANTER"},
		{"lead inversion", "banter is it going to rain", MatchAddress, PositionLeading, false, 0.85, "banter"},
		{"lead question", "banter can you help", MatchAddress, PositionLeading, false, 0.85, "banter"},
		{"lead then and", "banter, and you?", MatchAddress, PositionLeading, false, 0.9, "banter"},
		{"list item", "we had jokes, banter, and snacks", MatchMention, PositionMention, false, 0, "banter"},
		// Talking about the bot, or the word.
		{"noun aside", "ok so banter aside, are we on?", MatchMention, PositionMention, false, 0, "banter"},
		{"determiner", "the banter in here is great", MatchMention, PositionMention, false, 0, "banter"},
		{"adjective", "I love good banter", MatchMention, PositionMention, false, 0, "banter"},
		{"adjective end", "nice banter", MatchMention, PositionMention, false, 0, "banter"},
		{"object verb", "do you like banter?", MatchMention, PositionMention, false, 0, "banter"},
		{"preposition", "what counts as banter anyway", MatchMention, PositionMention, false, 0, "banter"},
		{"copula", "sorry, that was banter", MatchMention, PositionMention, false, 0, "banter"},
		{"noun phrase", "nothing beats some office banter", MatchMention, PositionMention, false, 0, "banter"},
		{"modal verb", "some people can't handle banter", MatchMention, PositionMention, false, 0, "banter"},
		{"call that", "you call that banter?", MatchMention, PositionMention, false, 0, "banter"},
		{"someone else called", "mike can you reset banter", MatchMention, PositionMention, false, 0, "banter"},
		{"statement after name", "banter roasted mike so hard", MatchMention, PositionMention, false, 0, "banter"},
		{"reported", "then he goes thanks banter", MatchMention, PositionMention, false, 0, "banter"},
		{"double quotes", `she typed "banter, tell me a joke"`, MatchMention, PositionMention, false, 0, "banter"},
		{"single quotes", "he said 'banter, stop'", MatchMention, PositionMention, false, 0, "'banter"},
		{"link text", "read [banter](https://x.io) docs", MatchMention, PositionMention, false, 0, "banter"},
		// Talking about the bot.
		{"asked yesterday", "I asked banter yesterday", MatchMention, PositionMention, false, 0, "banter"},
		{"just banter", "that's just banter, man", MatchMention, PositionMention, false, 0, "banter"},
		{"sentence about", "banter is great", MatchMention, PositionMention, false, 0, "banter"},
		{"said", "Banter said no earlier", MatchMention, PositionMention, false, 0, "Banter"},
		{"possessive", "banter's jokes are bad", MatchMention, PositionMention, false, 0, "banter's"},
		{"object", "did anyone else see what banter wrote", MatchMention, PositionMention, false, 0, "banter"},
		{"quoted", "he said 'banter' like a word", MatchMention, PositionMention, false, 0, "'banter'"},
		{"after a real mention", "<@123456> banter, you there?", MatchAddress, PositionLeading, false, 0.9, "banter"},
		{"channel link then name", "see <#98765>, banter", MatchAddress, PositionVocative, false, 0.85, "banter"},
		// Not the name at all.
		{"custom emoji", "lol <:banter:112233445566> nice", MatchNone, PositionNone, false, 0, ""},
		{"animated emoji", "<a:banter:112233445566>", MatchNone, PositionNone, false, 0, ""},
		{"url", "see https://banter.example.com/docs", MatchNone, PositionNone, false, 0, ""},
		{"inline code", "run `banter replay` now", MatchNone, PositionNone, false, 0, ""},
		{"code block", "```\nbanter:\n  name: banter\n```", MatchNone, PositionNone, false, 0, ""},
		{"file name", "check banter.yaml", MatchNone, PositionNone, false, 0, ""},
		{"path", "see cmd/banter/main.go", MatchNone, PositionNone, false, 0, ""},
		{"name after url", "https://x.io/a banter, thoughts?", MatchAddress, PositionLeading, false, 0.9, "banter"},
		{"substring", "we were bantering all night", MatchNone, PositionNone, false, 0, ""},
		{"prefix", "banters gonna banter... not", MatchMention, PositionMention, false, 0, "banter"},
		{"empty", "", MatchNone, PositionNone, false, 0, ""},
		{"no name", "what do you think about pineapple on pizza? and be honest", MatchNone, PositionNone, false, 0, ""},
		{"banner text", "hey banner, what's the weather", MatchNone, PositionNone, false, 0, ""},
		{"other greeting merged", "heybanner", MatchNone, PositionNone, false, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.MatchText(tc.in)
			if got.Kind != tc.kind || got.Position != tc.pos || got.Alias != tc.alias {
				t.Fatalf("MatchText(%q) = %+v, want kind %v pos %v alias %v", tc.in, got, tc.kind, tc.pos, tc.alias)
			}
			if got.Variant {
				t.Errorf("text match reported a variant: %+v", got)
			}
			if got.Confidence < tc.minConf {
				t.Errorf("confidence %.2f < %.2f", got.Confidence, tc.minConf)
			}
			if tc.kind == MatchAddress && got.Confidence < 0.8 {
				t.Errorf("address confidence %.2f too low", got.Confidence)
			}
			if tc.kind == MatchMention && got.Confidence >= 0.5 {
				t.Errorf("mention confidence %.2f too high", got.Confidence)
			}
			if word := tc.in[got.Start:got.End]; word != tc.wantWord {
				t.Errorf("matched %q, want %q", word, tc.wantWord)
			}
		})
	}
}

// The fixture transcripts of the speech corpus, as speech recognition
// returns them.
func TestMatchVoice(t *testing.T) {
	m := NewNameMatcher("banter", "bant")
	tests := []struct {
		in      string
		kind    MatchKind
		variant bool
		minConf float64
		maxConf float64
	}{
		{"hey banter, what's the weather like today?", MatchAddress, false, 0.9, 1},
		{"banter, tell us a joke", MatchAddress, false, 0.9, 1},
		{"hey banner, what's the weather", MatchAddress, true, 0.7, 0.85},
		{"Hey Banner. What's the weather?", MatchAddress, true, 0.7, 0.85},
		{"banner, tell us a joke", MatchAddress, true, 0.7, 0.85},
		{"hey bander can you hear me", MatchAddress, true, 0.8, 0.9}, // d/t: half an edit
		{"banner what do you think", MatchAddress, true, 0.7, 0.8},   // a question follows: fast path
		{"banner over there needs fixing", MatchAddress, true, 0.5, 0.7},
		{"banta can you hear me", MatchAddress, true, 0.7, 0.8},
		{"thanks ban ter", MatchAddress, true, 0.85, 0.95},
		{"heybanner", MatchAddress, true, 0.7, 0.8},
		{"can you hear me banner", MatchAddress, true, 0.7, 0.8},
		{"hang the banner over there", MatchNone, false, 0, 0},
		{"bruce banner is the hulk", MatchNone, false, 0, 0},
		{"the banners are up", MatchNone, false, 0, 0},
		{"banters gonna banter", MatchMention, false, 0.1, 0.5},
		{"can you pass me the banner", MatchNone, false, 0, 0},
		{"the banner fell down", MatchNone, false, 0, 0},
		{"mike, can you hear me?", MatchNone, false, 0, 0},
		{"uh huh", MatchNone, false, 0, 0},
		{"that's just banter, man", MatchMention, false, 0.1, 0.5},
		{"banter, stop talking please", MatchAddress, false, 0.9, 1},
		{"what do you think about pineapple on pizza? and be honest", MatchNone, false, 0, 0},
		{"hey manner, what's up", MatchNone, false, 0, 0},       // different first sound
		{"hey better, what's up", MatchAddress, true, 0.5, 0.7}, // two edits: below the fast path
		{"hey bandwagon", MatchNone, false, 0, 0},
		{"hey band, play something", MatchNone, false, 0, 0}, // "bant" is too short for variants
		{"hey bant, play something", MatchAddress, false, 0.9, 1},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := m.MatchVoice(tc.in)
			if got.Kind != tc.kind || got.Variant != tc.variant {
				t.Fatalf("MatchVoice(%q) = %+v, want kind %v variant %v", tc.in, got, tc.kind, tc.variant)
			}
			if got.Kind != MatchNone && (got.Confidence < tc.minConf || got.Confidence > tc.maxConf) {
				t.Errorf("confidence %.3f not in [%.2f, %.2f]", got.Confidence, tc.minConf, tc.maxConf)
			}
		})
	}
}

func TestMatchNonASCIIName(t *testing.T) {
	m := NewNameMatcher("Zoë")
	if got := m.MatchText("ZOË, what's up?"); got.Kind != MatchAddress {
		t.Errorf("upper-case non-ASCII name: %+v", got)
	}
	if got := m.MatchText("I like zoë"); got.Kind != MatchMention {
		t.Errorf("mention: %+v", got)
	}
	if got := NewNameMatcher("", "").MatchText("hey"); got.Kind != MatchNone || !NewNameMatcher("").Empty() {
		t.Errorf("empty matcher: %+v", got)
	}
}

func TestPhoneticKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"banter", "BNTR"},
		{"banner", "BNR"},
		{"Panther", "BNTR"},
		{"bander", "BNTR"},
		{"Alice", "ALS"},
		{"philip", "FLB"},
		{"banana", "BNN"},
	}
	for _, tc := range tests {
		var buf [keyMax]byte
		n := phoneticKey(tc.in, &buf)
		if got := string(buf[:n]); got != tc.want {
			t.Errorf("phoneticKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"banter", "banner", 1}, {"banter", "BANTER", 0}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"banter", "better", 2},
	}
	for _, tc := range tests {
		if got := editDistance(tc.a, tc.b, true); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestAddressesName(t *testing.T) {
	tests := []struct {
		s, name string
		want    bool
	}{
		{"mike, can you hear me?", "Mike", true},
		{"mike can you hear me", "mike_92", true},
		{"hey Mike!", "~Mike (he/him)", true},
		{"I told mike already", "Mike", false},
		{"mikey, you there?", "Mike", false},
		{"anyone seen the mic", "Mike", false},
		{"hey banter", "", false},
	}
	for _, tc := range tests {
		if got := addressesName(tc.s, tc.name); got != tc.want {
			t.Errorf("addressesName(%q, %q) = %v, want %v", tc.s, tc.name, got, tc.want)
		}
	}
}

func TestMatcherAllocs(t *testing.T) {
	m := NewNameMatcher("banter", "bant")
	for _, s := range []string{"hey banner, what's the weather", "I asked banter yesterday about pizza, he was fine", "heybanter"} {
		if n := testing.AllocsPerRun(200, func() { m.MatchVoice(s) }); n != 0 {
			t.Errorf("MatchVoice(%q): %v allocs, want 0", s, n)
		}
		if n := testing.AllocsPerRun(200, func() { addressesName(s, "Mike Smith") }); n != 0 {
			t.Errorf("addressesName(%q): %v allocs, want 0", s, n)
		}
	}
}

func FuzzMatchVoice(f *testing.F) {
	for _, s := range []string{"hey banter, what's the weather like today?", "hey banner, what's the weather",
		"can you pass me the banner", "…‽", "@@banter", "heybanter", "banter's", "ба́нтер, привет", "\xff\xfe banter",
		"thanks for the help banter", "ban ter can you", "he said 'banter", "``` banter", "`banter` x", "[banter](", "'", "\"banter",
		"what did you say banter", "heybanta", "b", "ba ter"} {
		f.Add(s)
	}
	m := NewNameMatcher("banter", "big b")
	f.Fuzz(func(t *testing.T, s string) {
		for _, got := range []NameMatch{m.MatchText(s), m.MatchVoice(s)} {
			if got.Kind == MatchNone {
				continue
			}
			if got.Start < 0 || got.End > len(s) || got.Start >= got.End {
				t.Fatalf("bad range %d..%d for %q", got.Start, got.End, s)
			}
			if got.Confidence <= 0 || got.Confidence > 1 {
				t.Fatalf("confidence %v out of range for %q", got.Confidence, s)
			}
		}
	})
}
