package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// The scripted corpus: several guilds, a few weeks of conversation in each, members who state
// facts about themselves among small talk, later correct some of them, and a question set with
// the fact each question should find. Everything derives from a fixed seed.

// member is one person of a guild, with what they will say about themselves.
type member struct {
	id, name string
	pets     []pet
	city     string
	newCity  string // "" when they do not move
	job      string
	newJob   string
	food     string
	music    string
}

type pet struct{ kind, name string }

// line is one message of the corpus: who says what, when, in which channel.
type line struct {
	guild, channel string
	author         *member
	text           string
	at             time.Time
	// fact is the statement the scripted extraction will make of it ("" for small talk).
	fact string
}

// question asks about one fact (or several) in a guild.
type question struct {
	kind  string // single, several, temporal, updated, forgotten, cross_guild, paraphrase
	guild string
	asker *member
	text  string
	want  []string  // statements that should be among the top 5
	gone  []string  // statements that must not appear (retired, forgotten, another guild's)
	day   time.Time // temporal: when the wanted fact was noted
}

var (
	names   = []string{"alice", "bruno", "chiara", "dmitri", "elena", "farid", "greta", "hugo", "ines", "jonas", "kaito", "lena", "mateo", "nadia", "oscar", "priya", "quinn", "rosa"}
	kinds   = []string{"cat", "dog", "parrot", "rabbit", "turtle", "hamster", "ferret", "goldfish"}
	petName = []string{"Miso", "Rex", "Kiwi", "Pepper", "Nemo", "Biscuit", "Luna", "Ziggy", "Tofu", "Mango", "Pixel", "Waffles"}
	cities  = []string{"Berlin", "Lisbon", "Oslo", "Porto", "Vienna", "Krakow", "Lyon", "Turin", "Ghent", "Tartu", "Bergen", "Malmo"}
	jobs    = []string{"nurse", "welder", "teacher", "baker", "pilot", "chemist", "librarian", "plumber", "architect", "translator"}
	foods   = []string{"ramen", "paella", "pierogi", "falafel", "risotto", "dumplings", "tacos", "goulash"}
	music   = []string{"cello", "drums", "banjo", "flute", "trumpet", "harp", "ukulele", "accordion"}
	chatter = []string{"lol", "anyone around?", "that match last night was wild", "brb coffee", "good morning all",
		"this weather though", "haha true", "ok see you later", "did anyone watch the new episode", "nice one"}
)

// corpus builds the guilds' conversations and the questions.
func corpus(seed uint64, guilds, membersPer, weeks int) ([]line, []question, map[string][]*member) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	start := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	byGuild := map[string][]*member{}
	var lines []line
	for g := range guilds {
		guild := fmt.Sprintf("9%017d", g+1)
		for i := range membersPer {
			m := &member{id: fmt.Sprintf("8%017d", g*100+i+1), name: names[1+(g*(membersPer-1)+i-1)%(len(names)-1)],
				city: pick(cities), job: pick(jobs), food: pick(foods), music: pick(music)}
			if i == 0 { // the same person in every guild, with a first pet of each guild's own
				m.id, m.name = "800000000000000001", names[0]
				m.pets = append(m.pets, pet{kind: kinds[g%len(kinds)], name: petName[g%len(petName)]})
			}
			// One or two pets of different kinds; the person in every guild never has another
			// guild's first pet (a cross-guild question would then find this guild's own).
			for want := 1 + rng.IntN(2); len(m.pets) < want; {
				p := pet{kind: pick(kinds), name: pick(petName)}
				if !slices.ContainsFunc(m.pets, func(x pet) bool { return x.kind == p.kind }) && (i != 0 || !firstPetOfAGuild(p, guilds)) {
					m.pets = append(m.pets, p)
				}
			}
			if i%2 == 0 {
				for m.newCity = pick(cities); m.newCity == m.city; m.newCity = pick(cities) {
				}
			}
			if i%3 == 1 {
				for m.newJob = pick(jobs); m.newJob == m.job; m.newJob = pick(jobs) {
				}
			}
			byGuild[guild] = append(byGuild[guild], m)
		}
		lines = append(lines, conversation(rng, guild, byGuild[guild], start, weeks)...)
	}
	return lines, questions(byGuild), byGuild
}

// conversation is one guild's weeks: each member's facts on scattered days of the first half,
// corrections in the second half, small talk every day, across two channels.
func conversation(rng *rand.Rand, guild string, ms []*member, start time.Time, weeks int) []line {
	days := weeks * 7
	var out []line
	say := func(day int, m *member, text, fact string) {
		ch := fmt.Sprintf("%s-%d", guild, rng.IntN(2))
		at := start.AddDate(0, 0, day).Add(time.Duration(rng.IntN(600)) * time.Minute)
		out = append(out, line{guild: guild, channel: ch, author: m, text: text, at: at, fact: fact})
	}
	first := func() int { return rng.IntN(days / 2) }
	for _, m := range ms {
		for _, p := range m.pets {
			say(first(), m, fmt.Sprintf("I have a %s named %s", p.kind, p.name), fmt.Sprintf("%s has a %s named %s", m.name, p.kind, p.name))
		}
		say(first(), m, "I live in "+m.city, m.name+" lives in "+m.city)
		say(first(), m, "I work as a "+m.job, m.name+" works as a "+m.job)
		say(first(), m, "my favourite food is "+m.food, m.name+"'s favourite food is "+m.food)
		say(first(), m, "I play the "+m.music, m.name+" plays the "+m.music)
		if m.newCity != "" {
			say(days/2+rng.IntN(days/2), m, "I moved to "+m.newCity, m.name+" lives in "+m.newCity)
		}
		if m.newJob != "" {
			say(days/2+rng.IntN(days/2), m, "I now work as a "+m.newJob, m.name+" works as a "+m.newJob)
		}
	}
	for day := range days {
		for range 3 + rng.IntN(4) {
			say(day, ms[rng.IntN(len(ms))], chatter[rng.IntN(len(chatter))], "")
		}
	}
	sortLines(out)
	return out
}

// questions asks, in each guild, about every member's facts: the asker is another member
// (memory follows people across channels and askers), except for the cross-guild questions,
// asked by the person themself in another guild.
func questions(byGuild map[string][]*member) []question {
	var qs []question
	for guild, ms := range byGuild {
		for i, m := range ms {
			asker := ms[(i+1)%len(ms)]
			q := func(kind, text string, want, gone []string) {
				qs = append(qs, question{kind: kind, guild: guild, asker: asker, text: text, want: want, gone: gone})
			}
			var pets []string
			for j, p := range m.pets {
				st := fmt.Sprintf("%s has a %s named %s", m.name, p.kind, p.name)
				if j == 0 && forgottenByDelete(i) {
					q("forgotten", fmt.Sprintf("what is the name of %s's %s?", m.name, p.kind), nil, []string{st})
					continue
				}
				pets = append(pets, st)
				q("single", fmt.Sprintf("what is the name of %s's %s?", m.name, p.kind), []string{st}, nil)
			}
			if len(pets) > 1 {
				q("several", fmt.Sprintf("which pets does %s have?", m.name), pets, nil)
			}
			food := m.name + "'s favourite food is " + m.food
			if forgottenByCommand(i) {
				q("forgotten", fmt.Sprintf("what is %s's favourite food?", m.name), nil, []string{food})
			} else {
				q("single", fmt.Sprintf("what is %s's favourite food?", m.name), []string{food}, nil)
			}
			q("temporal", fmt.Sprintf("since when does %s play the %s?", m.name, m.music), []string{m.name + " plays the " + m.music}, nil)
			if m.newCity != "" {
				q("updated", fmt.Sprintf("where does %s live these days?", m.name), []string{m.name + " lives in " + m.newCity}, []string{m.name + " lives in " + m.city})
			} else {
				q("single", fmt.Sprintf("which city does %s live in?", m.name), []string{m.name + " lives in " + m.city}, nil)
			}
			if m.newJob != "" {
				q("updated", fmt.Sprintf("what is %s's job now?", m.name), []string{m.name + " works as a " + m.newJob}, []string{m.name + " works as a " + m.job})
			} else {
				q("single", fmt.Sprintf("what does %s work as?", m.name), []string{m.name + " works as a " + m.job}, nil)
			}
			paraphrases(q, i, m, pets, food)
		}
	}
	// The same person in every guild: what they said in one guild is never found in another.
	for guild, ms := range byGuild {
		for other, os := range byGuild {
			if other == guild {
				continue
			}
			p := os[0].pets[0]
			qs = append(qs, question{kind: "cross_guild", guild: guild, asker: ms[0],
				text: fmt.Sprintf("what is the name of my %s?", p.kind), gone: []string{fmt.Sprintf("%s has a %s named %s", os[0].name, p.kind, p.name)}})
		}
	}
	sortQuestions(qs)
	return qs
}

// forgottenByDelete: this member deletes the message of their first pet.
func forgottenByDelete(i int) bool { return i%3 == 2 }

// forgottenByCommand: this member forgets their favourite food with /memory forget.
func forgottenByCommand(i int) bool { return i%2 == 0 }

// firstPetOfAGuild reports whether p is the first pet the person in every guild has in one of
// the guilds.
func firstPetOfAGuild(p pet, guilds int) bool {
	for g := range guilds {
		if p == (pet{kind: kinds[g%len(kinds)], name: petName[g%len(petName)]}) {
			return true
		}
	}
	return false
}

// paraphrases ask about a member's facts in other words than the ones stored (written before
// the bench was first run with meaning, and never changed to suit the simulated embedding): only
// the member's name is shared with the statement, so the words alone tell the member's facts
// apart only by chance.
func paraphrases(q func(kind, text string, want, gone []string), i int, m *member, pets []string, food string) {
	if len(pets) > 0 {
		q("paraphrase", fmt.Sprintf("what animal does %s keep?", m.name), pets[:1], nil)
	}
	city := m.city
	if m.newCity != "" {
		city = m.newCity
	}
	q("paraphrase", fmt.Sprintf("where is %s based?", m.name), []string{m.name + " lives in " + city}, nil)
	job := m.job
	if m.newJob != "" {
		job = m.newJob
	}
	q("paraphrase", fmt.Sprintf("what is %s's occupation?", m.name), []string{m.name + " works as a " + job}, nil)
	if !forgottenByCommand(i) {
		q("paraphrase", fmt.Sprintf("which dish does %s enjoy most?", m.name), []string{food}, nil)
	}
	q("paraphrase", fmt.Sprintf("what instrument is %s good at?", m.name), []string{m.name + " plays the " + m.music}, nil)
}
