package decision

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestNicknameName(t *testing.T) {
	tests := []struct {
		nick, name, reason string
	}{
		{"", "", ""},
		{"   ", "", ""},
		{"Jarvis", "Jarvis", ""},
		{"Jarvis 🤖", "Jarvis", ""},
		{"[AI] Jarvis", "Jarvis", ""},
		{"Jarvis (he/him)", "Jarvis", ""},
		{"~Jarvis~", "Jarvis", ""},
		{"Big J", "Big J", ""},
		{"R2-D2", "R2-D2", ""},
		{"Zoë", "Zoë", ""},
		{"!!!", "", NicknameNoWords},
		{"🤖🤖", "", NicknameNoWords},
		{"(banter)", "", NicknameNoWords},
		{"J", "", NicknameFewLetters},
		{"J 42", "", NicknameFewLetters},
		{"ok", "", NicknameCommonWord},
		{"Hey", "", NicknameCommonWord},
		{"you", "", NicknameCommonWord},
		{"The One", "", NicknameCommonWord},
		{"bot", "", NicknameCommonWord},
		{"Everyone!", "", NicknameCommonWord},
		{"Jarvis the Bot", "Jarvis the Bot", ""},
	}
	for _, tc := range tests {
		name, reason := NicknameName(tc.nick)
		if name != tc.name || reason != tc.reason {
			t.Errorf("NicknameName(%q) = %q, %q; want %q, %q", tc.nick, name, reason, tc.name, tc.reason)
		}
	}
}

// TestTextNicknamePerGuild: the bot's nickname is a name in its own guild only, applies as it
// changes, and is ignored when it is no usable name or bot.answerToNickname is off.
func TestTextNicknamePerGuild(t *testing.T) {
	tests := []struct {
		name    string
		off     bool
		guild   string
		nick    string
		content string
		want    Reason
		signal  Signal
	}{
		{"nickname addresses", false, "g1", "Jarvis", "jarvis, what's up?", ReasonNicknameAddress, SignalNameNickname},
		{"nickname capitalised vocative", false, "g1", "Jarvis", "what do you think, Jarvis?", ReasonNicknameAddress, SignalNameNickname},
		{"decorated nickname", false, "g1", "Jarvis 🤖", "hey jarvis can you help", ReasonNicknameAddress, SignalNameNickname},
		{"multi-word nickname", false, "g1", "Big J", "big j, play something", ReasonNicknameAddress, SignalNameNickname},
		{"word boundary", false, "g1", "Jarvis", "jarvisville is a town", ReasonInitiativeDisabled, SignalLLMDecides},
		{"talked about", false, "g1", "Jarvis", "I asked jarvis yesterday", ReasonInitiativeDisabled, SignalLLMDecides},
		{"other guild, no nickname", false, "g2", "", "jarvis, what's up?", ReasonInitiativeDisabled, SignalLLMDecides},
		{"no guild", false, "", "Jarvis", "jarvis, what's up?", ReasonInitiativeDisabled, SignalLLMDecides},
		{"name still works", false, "g1", "Jarvis", "banter, what's up?", ReasonNameAddress, SignalNameExact},
		{"alias still works", false, "g1", "Jarvis", "bant, what's up?", ReasonAliasAddress, SignalNameAlias},
		{"nickname is the name", false, "g1", "Banter", "banter, what's up?", ReasonNameAddress, SignalNameExact},
		{"common word ignored", false, "g1", "ok", "ok, what's up?", ReasonInitiativeDisabled, SignalLLMDecides},
		{"punctuation ignored", false, "g1", "...", "..., what's up?", ReasonInitiativeDisabled, SignalLLMDecides},
		{"option off", true, "g1", "Jarvis", "jarvis, what's up?", ReasonInitiativeDisabled, SignalLLMDecides},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := textPolicy()
			p.AllowInitiativeReplies = false
			p.AnswerToNickname = !tc.off
			e := NewTextEngine(p, EngineOptions{})
			turn := textTurn("c1", tc.content)
			turn.GuildID, turn.BotNickname = tc.guild, tc.nick
			d := e.Admit(&turn)
			if d.Reason != tc.want || d.Signal != tc.signal {
				t.Errorf("%q in %q (nick %q): %v/%v, want %v/%v", tc.content, tc.guild, tc.nick, d.Reason, d.Signal, tc.want, tc.signal)
			}
		})
	}
}

// TestNicknameChangesLive: one engine, the nickname changing under it as the gateway state
// does; each change is logged once.
func TestNicknameChangesLive(t *testing.T) {
	var logs bytes.Buffer
	p := textPolicy()
	p.AllowInitiativeReplies = false
	p.AnswerToNickname = true
	e := NewTextEngine(p, EngineOptions{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	steps := []struct {
		nick     string
		content  string
		want     Reason
		logged   string // a bot_nickname line with this in it ("" none)
		inPrompt string // Nickname's answer
	}{
		{"Jarvis", "jarvis, you there?", ReasonNicknameAddress, `"status":"in_use"`, "Jarvis"},
		{"Jarvis", "jarvis, still there?", ReasonNicknameAddress, "", "Jarvis"},
		{"Friday", "jarvis, you there?", ReasonInitiativeDisabled, `"nickname":"Friday"`, "Friday"},
		{"Friday", "friday, you there?", ReasonNicknameAddress, "", "Friday"},
		{"ok", "ok, you there?", ReasonInitiativeDisabled, `"reason":"common_word"`, ""},
		{"", "friday, you there?", ReasonInitiativeDisabled, `"status":"cleared"`, ""},
		{"", "banter, you there?", ReasonNameAddress, "", ""},
	}
	for i, st := range steps {
		logs.Reset()
		turn := textTurn("c1", st.content)
		turn.GuildID, turn.BotNickname = "g1", st.nick
		if d := e.Admit(&turn); d.Reason != st.want {
			t.Errorf("step %d: %q with nick %q: %v, want %v", i, st.content, st.nick, d.Reason, st.want)
		}
		got := logs.String()
		switch {
		case st.logged == "" && strings.Contains(got, EventBotNickname):
			t.Errorf("step %d: logged again: %s", i, got)
		case st.logged != "" && (strings.Count(got, EventBotNickname) != 1 || !strings.Contains(got, st.logged)):
			t.Errorf("step %d: want one %s line with %s, got %q", i, EventBotNickname, st.logged, got)
		}
		if n := e.Nickname("g1", st.nick); n != st.inPrompt {
			t.Errorf("step %d: Nickname = %q, want %q", i, n, st.inPrompt)
		}
	}
	// A reload starts from the policy: the option off drops the nickname.
	p.AnswerToNickname = false
	e.SetPolicy(p)
	turn := textTurn("c1", "jarvis, you there?")
	turn.GuildID, turn.BotNickname = "g1", "Jarvis"
	if d := e.Admit(&turn); d.Reason != ReasonInitiativeDisabled {
		t.Errorf("answerToNickname off after reload: %v", d.Reason)
	}
}

// TestNicknameIgnoredCounted: a nickname the engines do not answer to is counted once per
// engine and change, by pipeline and reason, like its bot_nickname line.
func TestNicknameIgnoredCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	tp := textPolicy()
	tp.AnswerToNickname = true
	vp := voicePolicy()
	vp.AnswerToNickname = true
	te := NewTextEngine(tp, EngineOptions{Metrics: m})
	ve := NewVoiceEngine(vp, EngineOptions{Metrics: m})
	steps := []struct{ guild, nick string }{
		{"g1", "ok"}, {"g1", "ok"}, {"g1", "!!"}, {"g2", "J"}, {"g2", "Jarvis"}, {"g2", "J"}, {"g3", ""}, {"g3", "The One"},
	}
	for _, st := range steps {
		te.MatchName(st.guild, st.nick, "hi")
	}
	ve.MatchName("g1", "🤖", "hi")
	want := map[string]float64{
		"text/" + NicknameCommonWord: 2, "text/" + NicknameNoWords: 1, "text/" + NicknameFewLetters: 2, "voice/" + NicknameNoWords: 1,
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "banter_bot_nickname_ignored_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			var pipeline, reason string
			for _, l := range s.GetLabel() {
				switch l.GetName() {
				case "pipeline":
					pipeline = l.GetValue()
				case "reason":
					reason = l.GetValue()
				}
			}
			got[pipeline+"/"+reason] = s.GetCounter().GetValue()
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("banter_bot_nickname_ignored_total = %v, want %v", got, want)
	}
}

func TestVoiceNicknamePerGuild(t *testing.T) {
	tests := []struct {
		name       string
		guild      string
		nick       string
		transcript string
		want       Reason
		signal     Signal
	}{
		{"nickname", "g1", "Jarvis", "hey jarvis, what's the weather like", ReasonDirectAddressFastPath, SignalNameNickname},
		{"wake ping", "g1", "Jarvis", "hey jarvis", ReasonWakePing, SignalNameNickname},
		{"other guild", "g2", "", "hey jarvis, what's the weather like", ReasonNeedsClassifier, SignalLLMDecides},
		{"name still works", "g1", "Jarvis", "hey banter, what's the weather like", ReasonDirectAddressFastPath, SignalNameExact},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := voicePolicy()
			p.AnswerToNickname = true
			e := NewVoiceEngine(p, EngineOptions{})
			turn := voiceTurn(tc.transcript)
			turn.GuildID, turn.BotNickname = tc.guild, tc.nick
			d := e.Decide(context.Background(), &turn)
			if d.Reason != tc.want || d.Signal != tc.signal {
				t.Errorf("%q in %q: %v/%v, want %v/%v", tc.transcript, tc.guild, d.Reason, d.Signal, tc.want, tc.signal)
			}
			if m := e.MatchName(tc.guild, tc.nick, tc.transcript); m.Addressed() != (tc.signal != SignalLLMDecides) {
				t.Errorf("MatchName addressed = %v", m.Addressed())
			}
		})
	}
}

// TestNicknameMatchNoAlloc: a guild's matcher is built when its nickname changes, not per turn.
func TestNicknameMatchNoAlloc(t *testing.T) {
	p := textPolicy()
	p.AnswerToNickname = true
	e := NewTextEngine(p, EngineOptions{})
	e.MatchName("g1", "Jarvis", "warm up")
	if n := testing.AllocsPerRun(100, func() { e.MatchName("g1", "Jarvis", "hey jarvis, you there?") }); n != 0 {
		t.Errorf("MatchName allocates %v times per call", n)
	}
}

func TestDirectAddressPromptNamesNickname(t *testing.T) {
	p := textPolicy()
	if got := directAddressSystemPrompt(p, ClassifierPolicy{}, "Jarvis"); !strings.Contains(got, "bant, Jarvis") {
		t.Errorf("system prompt does not name the nickname: %s", got)
	}
}

// FuzzNicknameName: any nickname Discord may hold is either ignored with a reason or gives a
// name that is no longer than it, matches itself as a name and leaves the bot's own name working.
func FuzzNicknameName(f *testing.F) {
	for _, s := range []string{"", "Jarvis", "Jarvis 🤖", "[AI] Jarvis (he/him)", "ok", "!!!", "J", "Big J", "R2-D2",
		"((((", "]]Jarvis[[", "Zoë", "ジャービス", "'jarvis'", "jarvis's", strings.Repeat("ab ", 30), "\xff\xfe",
		"İlkay 🤖", "[AI] STRAẞE", "Kai", "Ωmega", "Büyük İlkay", "ſam", "ǅemal"} {
		f.Add(s)
	}
	base := NewNameMatcher("banter", "bant")
	f.Fuzz(func(t *testing.T, nick string) {
		name, reason := NicknameName(nick)
		if (name == "") == (reason == "") && strings.TrimSpace(nick) != "" {
			t.Fatalf("NicknameName(%q) = %q, %q: want exactly one of a name and a reason", nick, name, reason)
		}
		if name == "" {
			return
		}
		if len(name) > len(nick) {
			t.Fatalf("NicknameName(%q) = %q: longer than the nickname", nick, name)
		}
		m := base.WithNickname(name)
		// As written, and in its other case forms (simple folding: "STRAẞE" is "straße",
		// "\u212Aai" is "kai"), alone between spaces or addressing.
		for v, i := name, 0; i < 3; i++ {
			for _, s := range []string{" " + v + " ", v + ", hi"} {
				if got := m.MatchText(s); got.Kind == MatchNone || got.Start < 0 || got.End > len(s) || got.Start >= got.End {
					t.Errorf("nickname %q (from %q) does not match %q: %+v", name, nick, s, got)
				}
			}
			v = foldVariant(v)
		}
		if got := m.MatchText("banter, hi"); got.Kind != MatchAddress {
			t.Errorf("with nickname %q the name no longer addresses: %+v", name, got)
		}
	})
}
