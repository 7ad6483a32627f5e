package memory

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/banterbot/banter/store"
)

func testShown() shown {
	return shown{
		authors: map[string]string{"m1": "u1", "m2": "u2", "m3": "u1"},
		known: []store.Fact{
			{ID: 10, SubjectID: "u1", Statement: "Alice lives in Berlin"},
			{ID: 11, SubjectID: "u2", Statement: "Bob plays bass"},
		},
	}
}

func TestParseAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      []Op
		err       string
	}{
		{"empty list", `{"facts":[]}`, []Op{}, ""},
		{"new fact", `{"facts":[{"subject":"u1","statement":" Alice has\na cat ","source_message_ids":["m1","m1"],"supersedes":0,"same_as":0}]}`,
			[]Op{{Subject: "u1", Statement: "Alice has a cat", Sources: []string{"m1"}}}, ""},
		{"correction", `{"facts":[{"subject":"u1","statement":"Alice moved to Paris","source_message_ids":["m3"],"supersedes":1,"same_as":0}]}`,
			[]Op{{Subject: "u1", Statement: "Alice moved to Paris", Sources: []string{"m3"}, Supersedes: 1}}, ""},
		{"server fact from anyone", `{"facts":[{"subject":"server","statement":"Movie night is Friday","source_message_ids":["m2"],"supersedes":0,"same_as":0}]}`,
			[]Op{{Subject: "server", Statement: "Movie night is Friday", Sources: []string{"m2"}}}, ""},
		{"not json", `facts: none`, nil, "invalid"},
		{"array", `[{"facts":[]}]`, nil, "invalid"},
		{"trailing data", `{"facts":[]} {"facts":[]}`, nil, "data after"},
		{"unknown field", `{"facts":[],"note":"x"}`, nil, "unknown field"},
		{"no facts field", `{}`, nil, "no facts"},
		{"null facts", `{"facts":null}`, nil, "no facts"},
		{"empty statement", `{"facts":[{"subject":"u1","statement":"  ","source_message_ids":["m1"],"supersedes":0,"same_as":0}]}`, nil, "empty statement"},
		{"long statement", `{"facts":[{"subject":"u1","statement":"` + strings.Repeat("a", 301) + `","source_message_ids":["m1"],"supersedes":0,"same_as":0}]}`, nil, "characters"},
		{"source not shown", `{"facts":[{"subject":"u1","statement":"x","source_message_ids":["m9"],"supersedes":0,"same_as":0}]}`, nil, "not a message shown"},
		{"no sources", `{"facts":[{"subject":"u1","statement":"x","source_message_ids":[],"supersedes":0,"same_as":0}]}`, nil, "sources"},
		{"subject not an author", `{"facts":[{"subject":"u9","statement":"x","source_message_ids":["m1"],"supersedes":0,"same_as":0}]}`, nil, "not an author"},
		{"about someone else, from another", `{"facts":[{"subject":"u1","statement":"x","source_message_ids":["m2"],"supersedes":0,"same_as":0}]}`, nil, "own"},
		{"supersedes another subject's", `{"facts":[{"subject":"u1","statement":"x","source_message_ids":["m1"],"supersedes":2,"same_as":0}]}`, nil, "another subject"},
		{"supersedes out of range", `{"facts":[{"subject":"u1","statement":"x","source_message_ids":["m1"],"supersedes":3,"same_as":0}]}`, nil, "does not exist"},
		{"negative", `{"facts":[{"subject":"u1","statement":"x","source_message_ids":["m1"],"supersedes":0,"same_as":-1}]}`, nil, "does not exist"},
		{"both", `{"facts":[{"subject":"u1","statement":"x","source_message_ids":["m1"],"supersedes":1,"same_as":1}]}`, nil, "both"},
		{"number as string", `{"facts":[{"subject":"u1","statement":"x","source_message_ids":["m1"],"supersedes":"1","same_as":0}]}`, nil, "invalid"},
		{"too many", `{"facts":[` + strings.TrimSuffix(strings.Repeat(`{"subject":"u1","statement":"x","source_message_ids":["m1"],"supersedes":0,"same_as":0},`, 21), ",") + `]}`, nil, "21 facts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseAnswer(tc.raw, testShown())
			if tc.err != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want ErrInvalid with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.Subject != w.Subject || g.Statement != w.Statement || strings.Join(g.Sources, ",") != strings.Join(w.Sources, ",") ||
					g.Supersedes != w.Supersedes || g.SameAs != w.SameAs {
					t.Errorf("op %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// FuzzParseAnswer: whatever the model answers, parsing never panics, and an answer it accepts
// only names messages it was shown, subjects that wrote them (or the server), and known facts
// of the same subject.
func FuzzParseAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"facts":[]}`,
		`{"facts":[{"subject":"u1","statement":"Alice has a cat","source_message_ids":["m1"],"supersedes":0,"same_as":0}]}`,
		`{"facts":[{"subject":"u1","statement":"Alice moved","source_message_ids":["m3","m1"],"supersedes":1,"same_as":0}]}`,
		`{"facts":[{"subject":"server","statement":"x","source_message_ids":["m2"],"supersedes":0,"same_as":0}]}`,
		`{"facts":[{"subject":"u2","statement":"Bob plays bass","source_message_ids":["m2"],"supersedes":0,"same_as":2}]}`,
		`{"facts":[{"subject":"u1","statement":"\u0000","source_message_ids":["m1"],"supersedes":9999999999999,"same_as":0}]}`,
		`{"facts":{}}`, `null`, `{"facts":[null]}`, `{"facts":[]}garbage`, "\xff\xfe", ``,
	} {
		f.Add(seed)
	}
	s := testShown()
	f.Fuzz(func(t *testing.T, raw string) {
		ops, err := parseAnswer(raw, s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || ops != nil {
				t.Fatalf("error %v with ops %v", err, ops)
			}
			return
		}
		for _, op := range ops {
			if op.Statement == "" || utf8.RuneCountInString(op.Statement) > maxStatementRunes || len(op.Sources) == 0 {
				t.Fatalf("accepted %+v", op)
			}
			own := false
			for _, src := range op.Sources {
				a, ok := s.authors[src]
				if !ok {
					t.Fatalf("accepted source %q", src)
				}
				own = own || a == op.Subject
			}
			if op.Subject != store.FactServer && !own {
				t.Fatalf("accepted %+v without a source of the subject's own", op)
			}
			for _, n := range []int{op.Supersedes, op.SameAs} {
				if n != 0 && (n < 0 || n > len(s.known) || s.known[n-1].SubjectID != op.Subject) {
					t.Fatalf("accepted known fact %d for %+v", n, op)
				}
			}
		}
	})
}
