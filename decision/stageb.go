package decision

import (
	"encoding/json"
	"strings"
)

// SkipSentinel is the answer with which the model declines a turn.
const SkipSentinel = "[SKIP]"

// ParseReply is Stage B: it reads the model's answer and says whether the
// turn is skipped. Skipped, with reason llm_skip: exactly "[SKIP]" (any
// case, optionally quoted, or a bare "SKIP"), a reply that starts or ends
// with "[SKIP]", a structured {"skip": true, ...} object (optionally in a
// ```json fence), or a loose "skip: true". Skipped with empty_reply:
// nothing but whitespace. A structured {"skip": false, "text": "..."}
// yields its text. Otherwise the
// reply is kept (model_replied), with any stray "[SKIP]" removed so that no
// sentinel ever reaches Discord or TTS.
func ParseReply(text string) (cleaned string, skipped bool, reason Reason) {
	t := strings.TrimSpace(text)
	if t == "" {
		return "", true, ReasonEmptyReply
	}
	if s, isJSON, skip := parseStructured(t); isJSON {
		if skip {
			return "", true, ReasonLLMSkip
		}
		t = strings.TrimSpace(s)
		if t == "" {
			return "", true, ReasonEmptyReply
		}
	}
	if len(t) <= 32 && isSkipTrue(t) {
		return "", true, ReasonLLMSkip
	}
	bare := strings.Trim(t, "\"'`*_ \t\r\n")
	if strings.EqualFold(bare, SkipSentinel) || bare == "SKIP" {
		return "", true, ReasonLLMSkip
	}
	if hasPrefixFold(bare, SkipSentinel) || hasSuffixFold(bare, SkipSentinel) {
		return "", true, ReasonLLMSkip
	}
	t = StripSentinels(t)
	if t == "" {
		return "", true, ReasonEmptyReply
	}
	return t, false, ReasonModelReplied
}

// isSkipTrue recognises a loose "skip: true" ("{skip:true}", "'skip' : true",
// "SKIP=true") that is not valid JSON.
func isSkipTrue(t string) bool {
	var buf [32]byte
	n := 0
	for i := 0; i < len(t); i++ {
		switch c := lower(t[i]); c {
		case ' ', '\t', '\n', '\r', '"', '\'', '`', '{', '}', '*':
		default:
			if c == '=' {
				c = ':'
			}
			buf[n] = c
			n++
		}
	}
	return string(buf[:n]) == "skip:true"
}

// StripSentinels removes every "[SKIP]" (any case) from s and trims the
// result.
func StripSentinels(s string) string {
	return strings.TrimSpace(removeSentinels(s))
}

// indexFold returns the index of the first ASCII case-insensitive match of
// sub in s, or -1. Non-ASCII bytes must match exactly.
func indexFold(s, sub string) int {
	if sub == "" {
		return 0
	}
	lo := lower(sub[0])
	up := lo
	if 'a' <= lo && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	for i := 0; i+len(sub) <= len(s); {
		// Jump to the next candidate first byte with the (vectorised)
		// IndexByte, in either case.
		j := strings.IndexByte(s[i:], lo)
		if up != lo {
			if k := strings.IndexByte(s[i:], up); k >= 0 && (j < 0 || k < j) {
				j = k
			}
		}
		if j < 0 {
			return -1
		}
		i += j
		if i+len(sub) > len(s) {
			return -1
		}
		k := 1
		for k < len(sub) && lower(s[i+k]) == lower(sub[k]) {
			k++
		}
		if k == len(sub) {
			return i
		}
		i++
	}
	return -1
}

// structuredReply is the structured form a model may answer in.
type structuredReply struct {
	Skip    *bool   `json:"skip"`
	Text    *string `json:"text"`
	Reply   *string `json:"reply"`
	Content *string `json:"content"`
}

// parseStructured recognises a JSON object with a "skip" field. isJSON is
// false for anything else (including JSON without "skip").
func parseStructured(t string) (text string, isJSON, skip bool) {
	body := t
	if strings.HasPrefix(body, "```") {
		body = strings.TrimPrefix(body, "```")
		body = strings.TrimPrefix(body, "json")
		body = strings.TrimSuffix(strings.TrimSpace(body), "```")
		body = strings.TrimSpace(body)
	}
	if !strings.HasPrefix(body, "{") || !strings.HasSuffix(body, "}") {
		return "", false, false
	}
	var r structuredReply
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Skip == nil {
		return "", false, false
	}
	if *r.Skip {
		return "", true, true
	}
	for _, s := range []*string{r.Text, r.Reply, r.Content} {
		if s != nil {
			return *s, true, false
		}
	}
	return "", true, false
}

// ReplyDecision turns a model reply into the cleaned text and a Stage B Decision
// (reply_skipped when skipped, reply_accepted otherwise). force marks a
// force-responded turn: its skip is honoured (the model may only skip for
// safety) but stays visible in the decision.
func ReplyDecision(p Pipeline, reply string, force bool) (string, Decision) {
	cleaned, skipped, reason := ParseReply(reply)
	d := Decision{Pipeline: p, Stage: StageB, Outcome: OutcomeAllow, Reason: reason, Force: force}
	if skipped {
		d.Outcome = OutcomeDeny
	}
	return cleaned, d
}

// Following gives the Stage B decision d the addressing of the Stage A decision a that admitted
// its turn (signal, confidence, directAddressed, eagerness, isEagerTurn) and a's turn, channel and
// user ids where d has none, so that reply_accepted and reply_skipped say how the turn came to
// be answered; d's own outcome, reason and force stay.
func (d Decision) Following(a Decision) Decision {
	d.Signal, d.Confidence, d.DirectAddressed = a.Signal, a.Confidence, a.DirectAddressed
	d.Eagerness, d.EagerTurn = a.Eagerness, a.EagerTurn
	if d.TurnID == "" {
		d.TurnID = a.TurnID
	}
	if d.ChannelID == "" {
		d.ChannelID = a.ChannelID
	}
	if d.UserID == "" {
		d.UserID = a.UserID
	}
	return d
}
