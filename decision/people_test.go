package decision

import (
	"testing"
)

// TestMatchPeople covers how people really write and say the name (issue
// 38): typos and held letters, compounds, other-language openers, "a" for
// "hey" and cut names in transcripts, and the name as a topic.
func TestMatchPeople(t *testing.T) {
	m := NewNameMatcher("banter", "bant")
	tests := []struct {
		name  string
		in    string
		voice bool
		want  MatchKind
	}{
		{"held letters", "banterrr, what's the weather?", false, MatchAddress},
		{"held vowel", "hey baaanter", false, MatchAddress},
		{"dropped letter", "yo bantr who won", false, MatchAddress},
		{"swapped letters", "banetr you there?", false, MatchAddress},
		{"typo as a topic is a word", "bantr is so slow today", false, MatchNone},
		{"real word is not a typo", "hey banner guy", false, MatchNone},
		{"real word is not a typo 2", "we could barter for it", false, MatchNone},
		{"inflected is not a typo", "stop bantering, banters", false, MatchNone},
		{"compound", "banterbot, what's 15% of 80?", false, MatchAddress},
		{"compound dash", "thanks banter-bot", false, MatchAddress},
		{"compound underscore", "banter_bot you there?", false, MatchAddress},
		{"two-word compound", "hi banter bot, how are you", false, MatchAddress},
		{"compound as topic", "banter bot keeps repeating itself", false, MatchMention},
		{"compound after a determiner", "the banterbot logs are huge", false, MatchMention},
		{"not a compound", "banterbob what's your steam name", false, MatchNone},
		{"spanish opener", "oye banter, ¿qué hora es?", false, MatchAddress},
		{"hinglish opener", "arre banter sun na", false, MatchAddress},
		{"hinglish statement", "yaar banter phir se hang ho gaya", false, MatchMention},
		{"russian greeting", "Привет banter, как дела?", false, MatchAddress},
		{"chinese greeting", "你好 banter", false, MatchAddress},
		{"japanese opener", "ねえ banter、今何時？", false, MatchAddress},
		{"german topic", "banter ist heute so langsam", false, MatchMention},
		{"spanish topic", "banter es muy lento hoy", false, MatchMention},
		{"chinese topic", "banter 很慢", false, MatchMention},
		{"russian topic", "banter такой медленный сегодня", false, MatchMention},
		{"french topic", "banter est lent aujourd'hui", false, MatchMention},
		{"question in german", "banter, ist das richtig?", false, MatchAddress},
		{"voice a for hey", "a banter what time is it", true, MatchAddress},
		{"voice a alone", "a banter", true, MatchAddress},
		{"voice a as article", "a banter session with the lads", true, MatchMention},
		{"voice ay", "ay banter you there", true, MatchAddress},
		{"cut name", "ter, what's the weather", true, MatchAddress},
		{"cut name clause", "nter can you hear me", true, MatchAddress},
		{"cut word", "ter that we went home", true, MatchNone},
		{"cut only at the start", "ok ter what time is it", true, MatchNone},
		{"cut name is not text", "ter what time is it", false, MatchNone},
		{"fair enough", "fair enough banter", false, MatchAddress},
		{"spot on", "spot on banter", false, MatchAddress},
		{"noun with modifier", "pub banter", false, MatchMention},
		{"peak", "peak banter", true, MatchMention},
		{"verb object", "nothing beats friday banter", false, MatchMention},
		{"command line", "banter replay -labels dev.jsonl gives 0.9", false, MatchMention},
		{"options after a vocative", "banter: should I link with -static or -shared?", false, MatchAddress},
		{"options after a comma", "banter, is it -v or --verbose?", false, MatchAddress},
		{"path", "the binary is ./banter", false, MatchMention},
		{"shell command", "systemctl restart banter", false, MatchMention},
		{"held greeting", "heyyy banter", false, MatchAddress},
		{"indefinite subject", "anyone know why banter stopped?", false, MatchMention},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.MatchText(tc.in)
			if tc.voice {
				got = m.MatchVoice(tc.in)
			}
			if got.Kind != tc.want {
				t.Errorf("%q (voice %v): %v %v %.2f, want %v", tc.in, tc.voice, got.Kind, got.Position, got.Confidence, tc.want)
			}
		})
	}
}

func TestTopicConfidence(t *testing.T) {
	m := NewNameMatcher("banter")
	for in, want := range map[string]float64{
		"banter is slow today":     confTopic,
		"the banter in here":       confTopic,
		"banter's jokes":           confTopic,
		"I asked banter yesterday": confMention, // maybe: the classifier may tell
		"this is amazing banter":   confMention,
	} {
		if got := m.MatchText(in); got.Kind != MatchMention || got.Confidence != want {
			t.Errorf("%q: %v %.2f, want mention %.2f", in, got.Kind, got.Confidence, want)
		}
	}
}

func TestMentionAddresses(t *testing.T) {
	const bot = "<@900000000000000001>"
	for in, want := range map[string]bool{
		"why is " + bot + " so slow today":       false,
		bot + " is down again":                   false,
		"can someone restart " + bot + "?":       false,
		"anyone know why " + bot + " stopped":    false,
		bot + " 今天好慢":                            false,
		bot + " what's the weather":              true,
		bot + " burst_send_limit_5_per_5s run 0": true, // an identifier, not a verb ("@banter works")
		bot + " v2s are out":                     true,
		bot + " and now?":                        true,
		"thanks " + bot:                          true,
		bot:                                      true,
		"what do you think " + bot + "?":         true,
		"hola " + bot + ", ¿qué tal?":            true,
		"no markup written":                      true, // a role mention, or a mention Discord lists: taken at its word
		bot + " <@300000000000000003> is slow":   true, // two mentions: cannot tell which is the bot's
	} {
		if got, _ := MentionAddresses(in); got != want {
			t.Errorf("MentionAddresses(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestReplyAimedElsewhere(t *testing.T) {
	m := NewNameMatcher("banter", "bant")
	for in, want := range map[string]bool{
		"look, even the bot agrees with me":             true,
		"<@300000000000000003> look at this":            true,
		"@mike see?":                                    true,
		"mike, read this":                               true,
		"priya you were right":                          true,
		"sam look what it said lol":                     true,
		"read this, mike":                               true,
		"siehst du sam, sogar der bot sagt das":         true,
		"这个机器人太慢了":                                      true,
		"even banter agrees lmao":                       true,
		"thanks!":                                       false,
		"perfect, thanks":                               false,
		"wait what do you mean":                         false,
		"tell <@300000000000000003> that too":           false,
		"mike would love this, can you send it to him?": false,
		"banter, you're wrong":                          false,
		"wow, impressive":                               false,
	} {
		if got := ReplyAimedElsewhere(in, m.MatchText(in)); got != want {
			t.Errorf("ReplyAimedElsewhere(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestTextAddressingSignals: Discord's own signals (a mention, a reply) are
// read against what the message says.
func TestTextAddressingSignals(t *testing.T) {
	e := NewTextEngine(textPolicy(), EngineOptions{})
	mention := textTurn("c1", "why is <@900000000000000001> so slow today")
	mention.MentionsBot = true
	if d := e.Admit(&mention); d.DirectAddressed {
		t.Errorf("a mention in a sentence about the bot: %+v", d)
	}
	mention.Content = "<@900000000000000001> why are you so slow today?"
	if d := e.Admit(&mention); d.Reason != ReasonDirectMention {
		t.Errorf("a mention addressing the bot: %+v", d)
	}
	reply := textTurn("c1", "look mike, even the bot agrees with me")
	reply.ReplyToBot = true
	if d := e.Admit(&reply); d.DirectAddressed {
		t.Errorf("a reply aimed at someone else: %+v", d)
	}
	reply.Content = "can you explain that again?"
	if d := e.Admit(&reply); d.Reason != ReasonReplyToBot {
		t.Errorf("a reply to the bot: %+v", d)
	}
	member := textTurn("c1", "banter bob are you on tonight?")
	member.Recent = []ContextLine{{Speaker: "Banter Bob", Text: "hey all"}}
	if d := e.Admit(&member); d.DirectAddressed {
		t.Errorf("a member named Banter Bob called: %+v", d)
	}
	member.Recent = nil
	if d := e.Admit(&member); !d.DirectAddressed {
		t.Errorf("without that member the name addresses the bot: %+v", d)
	}
	typo := textTurn("c1", "hey baxter, you coming?")
	if d := e.Admit(&typo); !d.DirectAddressed {
		t.Errorf("a typo of the name addresses the bot: %+v", d)
	}
	typo.Recent = []ContextLine{{Speaker: "Baxter (he/him)", Text: "back in 5"}}
	if d := e.Admit(&typo); d.DirectAddressed {
		t.Errorf("Baxter is in the channel: %+v", d)
	}
}

func TestVoiceMemberContainingName(t *testing.T) {
	e := NewVoiceEngine(voicePolicy(), EngineOptions{})
	turn := voiceTurn("hey banter bob, gg")
	turn.Participants = append(turn.Participants, Participant{ID: "u9", Name: "Banter Bob"})
	if d := e.Admit(&turn); d.DirectAddressed {
		t.Errorf("a member named Banter Bob greeted: %+v", d)
	}
}

func TestLookupWordFolds(t *testing.T) {
	for _, w := range []string{"heyyy", "hiii", "thanksss", "ПРИВЕТ", "Привет", "Спасибо"} {
		if lookupWord(w)&flagGreeting == 0 {
			t.Errorf("lookupWord(%q) is not a greeting", w)
		}
	}
	if lookupWord("goood")&flagAdj == 0 {
		t.Errorf("goood is not good")
	}
}

func TestOSADistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"banter", "banter", 0}, {"banetr", "banter", 1}, {"bnater", "banter", 1}, {"bantr", "banter", 1},
		{"bantter", "banter", 1}, {"vanter", "banter", 1}, {"abnetr", "banter", 2}, {"", "ab", 2}} {
		if got := osaDistance([]byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("osaDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestPeopleMatcherAllocs(t *testing.T) {
	m := NewNameMatcher("banter", "bant")
	for _, s := range []string{"banterrr, what's up", "hi banter bot, how are you", "ter, what's the weather", "a banter what time is it",
		"banter ist heute langsam", "Привет banter", "why is <@900000000000000001> so slow", "look mike, even the bot agrees"} {
		if n := testing.AllocsPerRun(200, func() { m.MatchText(s); m.MatchVoice(s) }); n != 0 {
			t.Errorf("match %q: %v allocs, want 0", s, n)
		}
		if n := testing.AllocsPerRun(200, func() { MentionAddresses(s); ReplyAimedElsewhere(s, NameMatch{}) }); n != 0 {
			t.Errorf("mention/reply %q: %v allocs, want 0", s, n)
		}
	}
}

func TestTextAdmitSignalsAllocs(t *testing.T) {
	e := NewTextEngine(textPolicy(), EngineOptions{})
	mention := textTurn("c1", "why is <@900000000000000001> so slow today")
	mention.MentionsBot = true
	reply := textTurn("c1", "look mike, even the bot agrees with me")
	reply.ReplyToBot = true
	member := textTurn("c1", "banter bob are you on tonight?")
	member.Recent = []ContextLine{{Speaker: "Banter Bob", Text: "hey all"}}
	typo := textTurn("c1", "hey baxter, you coming?")
	typo.Recent = []ContextLine{{Speaker: "Baxter", Text: "back in 5"}}
	for _, turn := range []TextTurn{mention, reply, member, typo} {
		if n := testing.AllocsPerRun(200, func() { e.Admit(&turn) }); n != 0 {
			t.Errorf("Admit(%q): %v allocs, want 0", turn.Content, n)
		}
	}
}

// FuzzAimed: the mention and reply readers never panic and the match
// ranges stay inside the text, whatever the text.
func FuzzAimed(f *testing.F) {
	for _, s := range []string{"why is <@900000000000000001> so slow today", "<@!1> hi", "<@", "<@>", "<@1", "@mike see?",
		"look, even the bot agrees", "这个机器人太慢了", "\xff<@1>", "a banter", "ter, what", "banterrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr",
		"ПРИВЕТ banter", "banter bot", "banter-bot's", "mike, <@2> <@3>"} {
		f.Add(s)
	}
	m := NewNameMatcher("banter", "bant")
	f.Fuzz(func(t *testing.T, s string) {
		MentionAddresses(s)
		for _, got := range []NameMatch{m.MatchText(s), m.MatchVoice(s)} {
			ReplyAimedElsewhere(s, got)
			if got.Kind != MatchNone && (got.Start < 0 || got.End > len(s) || got.Start >= got.End || got.Confidence <= 0 || got.Confidence > 1) {
				t.Fatalf("bad match %+v for %q", got, s)
			}
		}
		var buf [keyMax]byte
		if n := collapse(s, &buf); n > keyMax {
			t.Fatalf("collapse wrote %d bytes", n)
		}
	})
}
