package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/banterbot/banter/store"
)

// The extraction model's answer is untrusted input: it is read strictly, and an answer with
// anything wrong in it is refused whole (nothing stored, counted as invalid), never repaired.

// Limits of one extraction answer.
const (
	maxFactsPerAnswer = 20
	maxStatementRunes = 300
	maxSourcesPerFact = 20
	maxAnswerBytes    = 64 << 10
)

// Op is one fact the model reported, checked against what it was shown.
type Op struct {
	// Subject is a member's user id, or store.FactServer.
	Subject   string
	Statement string
	// Sources are ids of the batch's messages the fact comes from.
	Sources []string
	// Supersedes is the number of the known fact this one corrects (0: none); SameAs the
	// number of the known fact it repeats (0: none).
	Supersedes int
	SameAs     int
}

// shown is what the model was shown: the batch's messages (by id, with their authors) and the
// known facts, numbered from 1.
type shown struct {
	authors map[string]string // message id → author id
	known   []store.Fact      // known[n-1] is fact number n
}

// answer is the record_facts tool's arguments.
type answer struct {
	Facts []answerFact `json:"facts"`
}

type answerFact struct {
	Subject    string   `json:"subject"`
	Statement  string   `json:"statement"`
	Sources    []string `json:"source_message_ids"`
	Supersedes int      `json:"supersedes"`
	SameAs     int      `json:"same_as"`
}

// ErrInvalid wraps every reason an answer is refused.
var ErrInvalid = errors.New("memory: invalid extraction answer")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// parseAnswer reads the record_facts arguments: one JSON object, no unknown fields, nothing
// after it; every fact's subject is an author of the batch or "server", its sources are
// messages of the batch (and, for a member, at least one of theirs), its statement one line of
// text, and the known fact it supersedes or repeats is one of its subject's.
func parseAnswer(raw string, s shown) ([]Op, error) {
	if len(raw) > maxAnswerBytes {
		return nil, invalid("answer of %d bytes", len(raw))
	}
	if !utf8.ValidString(raw) {
		return nil, invalid("not UTF-8")
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	var a answer
	if err := dec.Decode(&a); err != nil {
		return nil, invalid("%v", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, invalid("data after the object")
	}
	if trimmed := bytes.TrimSpace([]byte(raw)); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, invalid("not an object")
	}
	if a.Facts == nil {
		return nil, invalid("no facts field")
	}
	if len(a.Facts) > maxFactsPerAnswer {
		return nil, invalid("%d facts (at most %d)", len(a.Facts), maxFactsPerAnswer)
	}
	ops := make([]Op, 0, len(a.Facts))
	for i, f := range a.Facts {
		op, err := checkFact(f, s)
		if err != nil {
			return nil, invalid("fact %d: %v", i+1, err)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func checkFact(f answerFact, s shown) (Op, error) {
	op := Op{Subject: strings.TrimSpace(f.Subject), Supersedes: f.Supersedes, SameAs: f.SameAs}
	op.Statement = strings.Join(strings.Fields(f.Statement), " ")
	switch n := utf8.RuneCountInString(op.Statement); {
	case n == 0:
		return op, errors.New("empty statement")
	case n > maxStatementRunes:
		return op, fmt.Errorf("statement of %d characters (at most %d)", n, maxStatementRunes)
	}
	if len(f.Sources) == 0 || len(f.Sources) > maxSourcesPerFact {
		return op, fmt.Errorf("%d sources (1 to %d)", len(f.Sources), maxSourcesPerFact)
	}
	ownSource := false
	seen := map[string]bool{}
	for _, src := range f.Sources {
		author, ok := s.authors[src]
		if !ok {
			return op, fmt.Errorf("source %q is not a message shown", src)
		}
		if !seen[src] {
			seen[src] = true
			op.Sources = append(op.Sources, src)
		}
		ownSource = ownSource || author == op.Subject
	}
	if op.Subject != store.FactServer {
		isAuthor := false
		for _, a := range s.authors {
			isAuthor = isAuthor || a == op.Subject
		}
		if !isAuthor {
			return op, fmt.Errorf("subject %q is not an author of the messages shown", op.Subject)
		}
		if !ownSource {
			return op, fmt.Errorf("no source of %s's own", op.Subject)
		}
	}
	if op.Supersedes != 0 && op.SameAs != 0 {
		return op, errors.New("both supersedes and same_as")
	}
	for _, n := range []int{op.Supersedes, op.SameAs} {
		if n == 0 {
			continue
		}
		if n < 0 || n > len(s.known) {
			return op, fmt.Errorf("known fact %d does not exist", n)
		}
		if s.known[n-1].SubjectID != op.Subject {
			return op, fmt.Errorf("known fact %d is about another subject", n)
		}
	}
	return op, nil
}
