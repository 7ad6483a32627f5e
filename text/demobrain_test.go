package text_test

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// labelledLine is one line of testdata/demo_chatter.tsv.
type labelledLine struct {
	label, author, text string
}

// readLabelled reads the labelled chatter set.
func readLabelled(t *testing.T) []labelledLine {
	t.Helper()
	f, err := os.Open("testdata/demo_chatter.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelledLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() == "" || strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 3 {
			t.Fatalf("demo_chatter.tsv: %q: want label, author, line", sc.Text())
		}
		out = append(out, labelledLine{cols[0], cols[1], cols[2]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDemoBrainEagerness plays the labelled chatter set (testdata/demo_chatter.tsv, 122 lines)
// through banter's text pipeline in an initiative channel, as the playground runs it, against
// the Discord simulator and the OpenAI simulator's demo brain, one line at a time, and counts
// which lines the bot answered: at the default eagerness it stays out of at least 90 % of the
// chatter and answers every addressed line and direct question; at 90 it joins at least half
// of the open questions to the room; at 0 it answers only what is addressed.
func TestDemoBrainEagerness(t *testing.T) {
	set := readLabelled(t)
	for _, tc := range []struct {
		level int
		// min and max share answered, by label
		min, max map[string]float64
	}{
		{level: 50, min: map[string]float64{"addressed": 1, "direct_question": 1}, max: map[string]float64{"chatter": 0.1}},
		{level: 90, min: map[string]float64{"addressed": 1, "direct_question": 1, "room_question": 0.5}},
		{level: 0, min: map[string]float64{"addressed": 1, "direct_question": 1}, max: map[string]float64{"chatter": 0, "room_question": 0}},
	} {
		t.Run(fmt.Sprintf("eagerness_%d", tc.level), func(t *testing.T) {
			h := newHarness(t, func(c *config.Config) {
				c.Permissions.AllowInitiativeReplies = true
				c.Activity.ReplyLevelInitiative = tc.level
			}, openaisim.DemoRules()...)
			h.reconfigure(func(c *config.Config) { c.Permissions.InitiativeChannelIDs = []string{string(h.general)} })
			people := map[string]discordsim.UserID{"alice": h.alice, "bob": h.bob}
			for _, name := range []string{"carol", "dave"} {
				people[name] = h.dsim.CreateUser(name)
				if err := h.dsim.AddMember(h.guild, people[name]); err != nil {
					t.Fatal(err)
				}
			}
			answered, total := map[string]int{}, map[string]int{}
			var quietOn, answeredOn []string
			for _, l := range set {
				// People take turns a few minutes apart (the prompt budget counts an hour).
				h.clock.Advance(3 * time.Minute)
				m := h.post(people[l.author], strings.ReplaceAll(l.text, "@bot", mention(h.dsim.BotID())))
				total[l.label]++
				if h.answered(m.ID) {
					answered[l.label]++
					answeredOn = append(answeredOn, l.label+": "+l.text)
				} else {
					quietOn = append(quietOn, l.label+": "+l.text)
				}
			}
			for label, n := range total {
				share := float64(answered[label]) / float64(n)
				t.Logf("eagerness %d: %s answered %d of %d (%.0f %%)", tc.level, label, answered[label], n, 100*share)
				if lo, ok := tc.min[label]; ok && share < lo {
					t.Errorf("%s: answered %.0f %%, want at least %.0f %%; quiet on:\n%s", label, 100*share, 100*lo, strings.Join(quietOn, "\n"))
				}
				if hi, ok := tc.max[label]; ok && share > hi {
					t.Errorf("%s: answered %.0f %%, want at most %.0f %%; answered:\n%s", label, 100*share, 100*hi, strings.Join(answeredOn, "\n"))
				}
			}
		})
	}
}

// answered waits for the bot's verdict on message id: a reply sent (not the forced-reply
// placeholder), or a skip, or a Stage A deny.
func (h *harness) answered(id discordsim.MessageID) bool {
	h.t.Helper()
	quoted := `"` + string(id) + `"`
	deadline := time.Now().Add(20 * time.Second) // a failure guard, not a timing assertion
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(h.logs.String(), "\n") {
			if !strings.Contains(line, `"message_id":`+quoted) && !strings.Contains(line, `"turnId":`+quoted) {
				continue
			}
			switch {
			case strings.Contains(line, `"msg":"sent_reply"`), strings.Contains(line, `"msg":"sent_message"`):
				if strings.Contains(line, `"placeholder":true`) {
					h.t.Fatalf("message %s got the forced-reply placeholder: the demo brain skipped it", id)
				}
				return true
			case strings.Contains(line, `"msg":"reply_skipped"`),
				strings.Contains(line, `"msg":"reply_admission"`) && strings.Contains(line, `"allow":false`):
				return false
			case strings.Contains(line, `"msg":"reply_rate_limited"`), strings.Contains(line, `"msg":"reply_failed"`):
				h.t.Fatalf("message %s: %s", id, line)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("no verdict on message %s; logs:\n%s", id, h.tail())
	return false
}
