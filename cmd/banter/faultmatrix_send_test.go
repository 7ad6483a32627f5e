package main

import (
	"context"
	"encoding/json"
	"testing"

	discordsim "github.com/banterbot/banter/sim/discord"
)

// The fault matrix's rows of a reply whose create gets no answer: it hangs without effect
// until the bot's attempt deadline (send_timeout_before_effect), or it takes effect and its
// connection is cut (send_cut_after_effect). Either way the bot retries with the same nonce
// and enforce_nonce, and the reply must exist exactly once.

// shortSendAttempt is the discord section of the "short_send" bot: a one-second deadline per
// attempt of a create (10 s by default), so that a hung attempt is given up quickly.
const shortSendAttempt = "  sendAttemptTimeoutSeconds: 1\n"

// unansweredSend is the row that leaves the next message create of each run without an
// answer by f (HangBeforeEffect or CutAfterEffect). Its check waits until the simulator has
// recorded every create it faulted (a hang once it has seen the bot give up) and finds each
// tried again with the same nonce and enforce_nonce, and that retry answered.
func unansweredSend(name string, f discordsim.RESTFault) fault {
	injected := 0
	return fault{name: name, bot: "short_send", runs: 2, addressed: 1,
		inject: func(b *botProcess) error {
			injected++
			if f == discordsim.HangBeforeEffect {
				b.dsim.HangNext(discordsim.RouteMessageCreate, 1)
			} else {
				b.dsim.CutNextAfterEffect(discordsim.RouteMessageCreate, 1)
			}
			return nil
		},
		check: func(t *testing.T, b *botProcess, _ textRun) {
			g, cancel := guard(context.Background())
			defer cancel()
			var faulted, unanswered []string
			err := b.dsim.Await(g, func() bool {
				faulted, unanswered = unansweredCreates(b, f)
				return len(faulted) >= injected && len(unanswered) == 0
			})
			if err != nil {
				t.Errorf("%s: %d of %d faulted creates recorded, never answered on a retry with the same nonce: %v (%v)",
					name, len(faulted), injected, unanswered, err)
			}
		},
	}
}

// unansweredCreates returns the nonces of the message creates the simulator left without an
// answer by f, and those of them that no create with the same nonce and enforce_nonce answered.
func unansweredCreates(b *botProcess, f discordsim.RESTFault) (faulted, unanswered []string) {
	answered := map[string]bool{}
	for _, r := range b.dsim.RESTLog() {
		var body struct {
			Nonce   string `json:"nonce"`
			Enforce bool   `json:"enforce_nonce"`
		}
		if r.Route != discordsim.RouteMessageCreate || json.Unmarshal(r.Body, &body) != nil || !body.Enforce {
			continue
		}
		switch {
		case r.Fault == f:
			faulted = append(faulted, body.Nonce)
		case r.Fault == discordsim.RESTFaultNone && r.Status == 200:
			answered[body.Nonce] = true
		}
	}
	for _, n := range faulted {
		if !answered[n] {
			unanswered = append(unanswered, n)
		}
	}
	return faulted, unanswered
}
