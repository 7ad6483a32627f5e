// Command memory measures banter's long-term memory on a scripted corpus: multi-week
// conversations in several guilds, extracted through the real memory.Extractor by the OpenAI
// simulator scripted as the memoryLlm (it turns "I have a cat named Miso" into "alice has a cat
// named Miso" and names the fact a correction supersedes), stored in a real SQLite store, then
// questions answered by the real recall (memory.Recall, what a turn's prompt carries). It prints
//
//	memory: questions=Q recall_at_5=R updated_current=U forgotten_leaks=F cross_guild_leaks=G extraction_calls_per_100_msgs=C
//
// then the same questions, with paraphrases (other words than the stored facts), answered by
// memory_lookup's facts by words only and by words and meaning (the embeddings slot played by
// the simulator's deterministic embedding), side by side, in the same format and per kind.
//
//	go run ./bench/memory
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/memory"
	openaisim "github.com/banterbot/banter/sim/openai"
	"github.com/banterbot/banter/store"
)

var showMisses = flag.Bool("misses", false, "print each question missed and what was recalled")

func main() {
	seed := flag.Uint64("seed", 33, "corpus seed")
	guilds := flag.Int("guilds", 4, "guilds")
	members := flag.Int("members", 8, "members per guild")
	weeks := flag.Int("weeks", 4, "weeks of conversation")
	flag.Parse()
	if err := run(*seed, *guilds, *members, *weeks); err != nil {
		log.Fatal(err)
	}
}

func run(seed uint64, guilds, members, weeks int) error {
	ctx := context.Background()
	lines, qs, byGuild := corpus(seed, guilds, members, weeks)
	dir, err := os.MkdirTemp("", "banter-bench-memory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "b.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	sim, err := openaisim.Start("127.0.0.1:0", openaisim.WithRules(openaisim.Rule{Name: "memory", Match: openaisim.Match{Model: "memory-model"}, Respond: scriptedExtraction}))
	if err != nil {
		return err
	}
	defer sim.Close()
	client, err := llm.New(llm.Options{BaseURL: sim.BaseURL(), APIKey: "sk"})
	if err != nil {
		return err
	}
	cfg := config.Default()
	cfg.Memory.Enabled, cfg.MemoryLLM.Model = true, "memory-model"
	cfg.Memory.QuietSeconds = 86400 // a day's end is the quiet spell: Flush below
	cfg.Embeddings.Enabled = true   // the simulator's deterministic embedding (sim/openai Embed), not a real model
	em, err := memory.NewEmbedder(func() *config.Config { return cfg }, st, client, nil, nil)
	if err != nil {
		return err
	}
	ex, err := memory.New(memory.Options{Config: func() *config.Config { return cfg }, Store: st, Model: client, Embedder: em})
	if err != nil {
		return err
	}
	if err := ingest(ctx, st, ex, lines); err != nil {
		return err
	}
	if err := ex.Close(ctx); err != nil {
		return err
	}
	if err := forget(ctx, st, lines, byGuild); err != nil {
		return err
	}
	calls := 0
	for _, r := range sim.Requests() {
		if r.Model == "memory-model" {
			calls++
		}
	}
	return report(ctx, st, em, cfg, lines, qs, calls)
}

// ingest stores the lines in time order as the text pipeline does and offers each to the
// extractor; the end of each day is a quiet spell (every pending batch goes).
func ingest(ctx context.Context, st store.Store, ex *memory.Extractor, lines []line) error {
	day := lines[0].at.YearDay()
	for i, l := range lines {
		if l.at.YearDay() != day {
			ex.Flush()
			day = l.at.YearDay()
		}
		m := store.Message{ID: msgID(i), ChannelID: l.channel, GuildID: l.guild, AuthorID: l.author.id, AuthorName: l.author.name,
			Content: l.text, CreatedAt: l.at}
		if err := st.SaveMessage(ctx, m); err != nil {
			return err
		}
		ex.Observe(ctx, m)
	}
	ex.Flush()
	return nil
}

func msgID(i int) string { return fmt.Sprintf("7%017d", i+1) }

// forget applies what members ask to forget: the message of a first pet deleted (as
// text.HandleMessageDelete does), a favourite food removed with /memory forget (as the command
// does: DeleteFact of the fact it lists).
func forget(ctx context.Context, st store.Store, lines []line, byGuild map[string][]*member) error {
	for guild, ms := range byGuild {
		for i, m := range ms {
			if forgottenByDelete(i) {
				text := fmt.Sprintf("I have a %s named %s", m.pets[0].kind, m.pets[0].name)
				for j, l := range lines {
					if l.guild == guild && l.author == m && l.text == text {
						if err := st.DeleteMessage(ctx, msgID(j)); err != nil {
							return err
						}
						if _, err := st.ForgetMessage(ctx, msgID(j)); err != nil {
							return err
						}
					}
				}
			}
			if forgottenByCommand(i) {
				fs, err := st.Facts(ctx, store.FactQuery{GuildID: guild, SubjectIDs: []string{m.id}, Limit: 25})
				if err != nil {
					return err
				}
				for _, f := range fs {
					if strings.Contains(f.Statement, "favourite food") {
						if err := st.DeleteFact(ctx, guild, f.ID); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// score is what one question found.
type score struct {
	found, clean, leaked bool
}

// tally counts one way of answering the questions.
type tally struct {
	byKind                                                           map[string][2]int // kind → answered well, asked
	questions, answerable, found, updated, current, forgotten, cross int
}

func newTally() *tally { return &tally{byKind: map[string][2]int{}} }

// add counts one question's score.
func (t *tally) add(ctx context.Context, st store.Store, q question, s score) {
	t.questions++
	k := t.byKind[q.kind]
	k[1]++
	switch q.kind {
	case "forgotten":
		if s.leaked || stored(ctx, st, q) {
			t.forgotten++
		} else {
			k[0]++
		}
	case "cross_guild":
		if s.leaked {
			t.cross++
		} else {
			k[0]++
		}
	default:
		t.answerable++
		if s.found {
			t.found++
			k[0]++
		}
		if q.kind == "updated" {
			t.updated++
			if s.found && s.clean {
				t.current++
			}
		}
	}
	t.byKind[q.kind] = k
}

func (t *tally) line(calls, msgs int) string {
	return fmt.Sprintf("questions=%d recall_at_5=%.3f updated_current=%.3f forgotten_leaks=%d cross_guild_leaks=%d extraction_calls_per_100_msgs=%.1f",
		t.questions, ratio(t.found, t.answerable), ratio(t.current, t.updated), t.forgotten, t.cross, 100*float64(calls)/float64(msgs))
}

// answerers are the three ways a question is answered: the facts a turn's prompt carries
// (memory.Recall, by participants and words: the line), and memory_lookup's facts by
// words only and by words and meaning.
func report(ctx context.Context, st store.Store, em *memory.Embedder, cfg *config.Config, lines []line, qs []question, calls int) error {
	noted := map[string]time.Time{} // statement → when its (latest) source was said, per guild
	for _, l := range lines {
		if l.fact != "" {
			noted[l.guild+"\x00"+l.fact] = l.at
		}
	}
	cache := memory.NewCache(st, 0) // read fresh for every question
	prompt, words, meaning := newTally(), newTally(), newTally()
	for _, q := range qs {
		got, err := memory.Recall(ctx, cache, q.guild, []string{q.asker.id}, q.text, cfg.Memory.PromptTokens)
		if err != nil {
			return err
		}
		qv, err := em.Query(ctx, q.guild, q.text)
		if err != nil {
			return err
		}
		byWords, err := memory.LookupFacts(ctx, st, q.guild, q.text, store.Embedding{}, 0, lookupResults)
		if err != nil {
			return err
		}
		blended, err := memory.LookupFacts(ctx, st, q.guild, q.text, qv, cfg.Embeddings.MeaningWeight, lookupResults)
		if err != nil {
			return err
		}
		for _, a := range []struct {
			name string
			t    *tally
			got  []store.Fact
		}{{"prompt", prompt, got}, {"words", words, byWords}, {"meaning", meaning, blended}} {
			s := judge(q, a.got, noted)
			if *showMisses && (len(q.want) > 0 && !s.found || s.leaked) {
				fmt.Printf("miss %s (%s) %q: want %q, not %q; got %q\n", a.name, q.kind, q.text, q.want, q.gone, statements(a.got))
			}
			if q.kind != "paraphrase" || a.t != prompt {
				a.t.add(ctx, st, q, s)
			}
		}
	}
	fmt.Println("memory: " + prompt.line(calls, len(lines)))
	fmt.Printf("\ncorpus: %d messages, %d extraction calls, seed-built (bench/memory/corpus.go)\n", len(lines), calls)
	fmt.Println("\nmemory_lookup's facts (top 5), the same questions and the paraphrases, side by side:")
	fmt.Println("words only:      memory: " + words.line(calls, len(lines)))
	fmt.Println("words + meaning: memory: " + meaning.line(calls, len(lines)))
	fmt.Printf("\n%-12s %9s %14s %14s %16s\n", "kind", "questions", "prompt", "lookup words", "words + meaning")
	kinds := make([]string, 0, len(meaning.byKind))
	for k := range meaning.byKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		p, w, m := prompt.byKind[k], words.byKind[k], meaning.byKind[k]
		ps := "-"
		if p[1] > 0 {
			ps = fmt.Sprintf("%.3f", ratio(p[0], p[1]))
		}
		fmt.Printf("%-12s %9d %14s %14.3f %16.3f\n", k, m[1], ps, ratio(w[0], w[1]), ratio(m[0], m[1]))
	}
	fmt.Println("\n(single, several, temporal, updated, paraphrase: share of questions whose facts are all in the top 5;\n forgotten, cross_guild: share with nothing that must not appear. prompt: the facts a turn's prompt\n carries, by words and participants (the first line; paraphrases left out of it); lookup: memory_lookup's\n facts, by words only, and by words and meaning blended with embeddings.meaningWeight)")
	return nil
}

// lookupResults is memory_lookup's default lookups.memory.maxResults.
const lookupResults = 5

// judge checks a question's top 5 (what it wants) and the whole recall (what must not appear).
func judge(q question, got []store.Fact, noted map[string]time.Time) score {
	top := got[:min(5, len(got))]
	s := score{found: len(q.want) > 0, clean: true}
	for _, w := range q.want {
		hit := false
		for _, f := range top {
			if f.Statement == w && (q.kind != "temporal" || f.CreatedAt.Equal(noted[q.guild+"\x00"+w])) {
				hit = true
			}
		}
		s.found = s.found && hit
	}
	for _, g := range q.gone {
		for _, f := range got {
			if f.Statement == g {
				s.clean, s.leaked = false, true
			}
		}
	}
	return s
}

// stored reports whether a forgotten statement is still anywhere in the guild's facts (as
// history too).
func stored(ctx context.Context, st store.Store, q question) bool {
	fs, err := st.Facts(ctx, store.FactQuery{GuildID: q.guild, History: true, Limit: 500})
	if err != nil {
		return true
	}
	for _, f := range fs {
		for _, g := range q.gone {
			if f.Statement == g {
				return true
			}
		}
	}
	return false
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func statements(fs []store.Fact) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Statement)
	}
	return out
}
