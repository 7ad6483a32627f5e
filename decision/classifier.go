package decision

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Classifier asks a cheap model a short question and returns its raw text
// answer. The engine builds the prompts, parses the answer (YES/NO or a
// confidence), bounds each attempt with a timeout and retries up to the
// policy's MaxAttempts. Implementations must honour ctx.
type Classifier interface {
	Classify(ctx context.Context, req ClassifierRequest) (raw string, err error)
}

// ClassifierPurpose says which question a classifier request asks.
type ClassifierPurpose uint8

// Purposes. The zero value is PurposeUnknown.
const (
	PurposeUnknown       ClassifierPurpose = iota
	PurposeReplyDecision                   // voice: should the bot reply? YES/NO
	PurposeDirectAddress                   // text: is the bot addressed? confidence 0..1
)

// String returns "reply_decision", "direct_address" or "unknown".
func (p ClassifierPurpose) String() string {
	switch p {
	case PurposeReplyDecision:
		return "reply_decision"
	case PurposeDirectAddress:
		return "direct_address"
	}
	return "unknown"
}

// ClassifierRequest is one classifier call.
type ClassifierRequest struct {
	Purpose ClassifierPurpose
	Model   string
	System  string // instructions
	User    string // the turn and its context
	// MaxTokens is the visible answer's size (a word or a number). It is a hint: a classifier
	// backed by a reasoning model must allow more, as reasoning counts against the cap
	// (ClassifierFunc drops it; llm.Client uses its own ClassifierMaxTokens).
	MaxTokens int
}

// ClassifierFunc adapts a plain function, such as an llm client's
// Classify(ctx, model, system, user) method, to Classifier.
type ClassifierFunc func(ctx context.Context, model, system, user string) (string, error)

// Classify calls f.
func (f ClassifierFunc) Classify(ctx context.Context, req ClassifierRequest) (string, error) {
	return f(ctx, req.Model, req.System, req.User)
}

// ClassifierPolicy configures a classifier (voice.replyDecisionLlm, or the
// optional text direct-address classifier).
type ClassifierPolicy struct {
	// Enabled turns the classifier on. Voice: when off, non-direct turns go
	// to generation as eager turns. Text: when off, ambiguous turns get no
	// llm_direct_address signal.
	Enabled bool
	// Model name passed to the Classifier.
	Model string
	// MaxAttempts (default 2) bounds calls per decision; errors, timeouts
	// and unclear answers are retried.
	MaxAttempts int
	// Timeout per attempt (default 3s).
	Timeout time.Duration
	// SystemPrompt replaces the built-in instructions when not empty; the
	// eagerness bias wording is still appended (voice).
	SystemPrompt string
	// UserPrompt replaces the built-in question when not empty. Voice
	// placeholders: {{botName}} {{speaker}} {{transcript}} {{participants}}
	// {{engagement}} {{eagerness}} {{timeline}} {{nameCue}}. Text
	// placeholders: {{botName}} {{author}} {{content}} {{recent}}.
	UserPrompt string
	// Threshold is the confidence (default 0.8) at or above which the text
	// direct-address classifier counts as addressing. Unused for voice.
	Threshold float64
}

// Classifier defaults.
const (
	DefaultClassifierAttempts  = 2
	DefaultClassifierTimeout   = 3 * time.Second
	DefaultDirectAddressThresh = 0.8
	classifierMaxTokens        = 8
)

func (p ClassifierPolicy) attempts() int {
	if p.MaxAttempts <= 0 {
		return DefaultClassifierAttempts
	}
	return p.MaxAttempts
}

func (p ClassifierPolicy) timeout() time.Duration {
	if p.Timeout <= 0 {
		return DefaultClassifierTimeout
	}
	return p.Timeout
}

func (p ClassifierPolicy) threshold() float64 {
	if p.Threshold <= 0 || p.Threshold > 1 {
		return DefaultDirectAddressThresh
	}
	return p.Threshold
}

// YesNo is a parsed classifier answer.
type YesNo uint8

// Answers. The zero value is AnswerUnclear.
const (
	AnswerUnclear YesNo = iota
	AnswerYes
	AnswerNo
)

// String returns "unclear", "yes" or "no".
func (a YesNo) String() string {
	switch a {
	case AnswerYes:
		return "yes"
	case AnswerNo:
		return "no"
	}
	return "unclear"
}

// ParseYesNo reads a classifier answer. It accepts YES or NO as the first
// word, in any case, optionally quoted, bolded or after "answer:", with any
// explanation after it ("Yes, they asked the bot."). An answer containing
// both words as words ("yes or no"), or neither, is unclear.
func ParseYesNo(raw string) YesNo {
	s := strings.TrimSpace(raw)
	s = strings.TrimLeft(s, " \t\r\n*_`\"'>#-")
	for _, p := range []string{"answer:", "decision:", "reply:"} {
		if hasPrefixFold(s, p) {
			s = strings.TrimLeft(s[len(p):], " \t\r\n*_`\"'")
		}
	}
	tz := tokenizer{s: s}
	first, ok := tz.next()
	if !ok || first.start != 0 {
		return AnswerUnclear
	}
	var ans, other string
	switch w := s[first.start:first.end]; {
	case strings.EqualFold(w, "yes"):
		ans, other = "yes", "no"
	case strings.EqualFold(w, "no"):
		ans, other = "no", "yes"
	default:
		return AnswerUnclear
	}
	for {
		tok, ok := tz.next()
		if !ok {
			break
		}
		if strings.EqualFold(s[tok.start:tok.end], other) {
			return AnswerUnclear
		}
	}
	if ans == "yes" {
		return AnswerYes
	}
	return AnswerNo
}

// ParseConfidence reads a direct-address classifier answer: a number in
// [0,1] ("0.92"), a percentage ("92%" or "92"), or YES (1) / NO (0).
func ParseConfidence(raw string) (float64, bool) {
	s := strings.TrimSpace(raw)
	start := -1
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) || (s[i] == '.' && i+1 < len(s) && isDigit(s[i+1])) {
			start = i
			break
		}
	}
	if start < 0 {
		switch ParseYesNo(s) {
		case AnswerYes:
			return 1, true
		case AnswerNo:
			return 0, true
		}
		return 0, false
	}
	end := start
	for end < len(s) && (s[end] == '.' || ('0' <= s[end] && s[end] <= '9')) {
		end++
	}
	num := strings.TrimRight(s[start:end], ".") // "0.8." ends a sentence
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	percent := end < len(s) && s[end] == '%'
	if !percent && v > 1 && strings.Contains(num, ".") {
		return 0, false // "1.5" is neither a probability nor a whole percentage
	}
	if percent || v > 1 {
		if v > 100 {
			return 0, false
		}
		v /= 100
	}
	return v, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// classifierResult is what a classifier run produced.
type classifierResult struct {
	raw      string
	attempts int
	latency  time.Duration
	err      error
	reason   Reason // failure reason (unclear, error, timeout) when !ok
	ok       bool   // parse succeeded
}

// runClassifier calls c up to p.attempts() times, each bounded by
// p.timeout(), until parse accepts an answer. It stops early when ctx ends.
func runClassifier(ctx context.Context, c Classifier, p ClassifierPolicy, req ClassifierRequest,
	now func() time.Time, parse func(raw string) bool) classifierResult {
	var res classifierResult
	start := now()
	for res.attempts < p.attempts() {
		res.attempts++
		actx, cancel := context.WithTimeout(ctx, p.timeout())
		raw, err := c.Classify(actx, req)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		res.raw = raw
		switch {
		case err != nil && (timedOut || errors.Is(err, context.DeadlineExceeded)):
			res.err = fmt.Errorf("decision: classify attempt %d: %w", res.attempts, err)
			res.reason = ReasonClassifierTimeout
		case err != nil:
			res.err = fmt.Errorf("decision: classify attempt %d: %w", res.attempts, err)
			res.reason = ReasonClassifierError
		case parse(raw):
			res.ok, res.err, res.reason = true, nil, ReasonUnknown
			res.latency = now().Sub(start)
			return res
		default:
			res.err = nil
			res.reason = ReasonClassifierUnclear
		}
		if ctx.Err() != nil {
			break
		}
	}
	res.latency = now().Sub(start)
	return res
}

// applyClassifier copies a run's facts into d.
func (d *Decision) applyClassifier(model string, res classifierResult) {
	d.ClassifierModel = model
	d.ClassifierRaw = res.raw
	d.ClassifierAttempts = res.attempts
	d.ClassifierLatency = res.latency
	if res.err != nil {
		d.ClassifierError = res.err.Error()
	}
}
