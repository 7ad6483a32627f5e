package decision

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// wordFlag marks the closed word lists a word belongs to. The lists are
// part-of-speech cues for the name matcher (which words open, close or
// govern a name), not a vocabulary: every other word is "open".
type wordFlag uint32

const (
	flagGreeting       wordFlag = 1 << iota // greets or thanks: "hey", "thanks", "hola"
	flagDiscourse                           // opens a sentence without content: "ok", "so", "well"
	flagMergedGreeting                      // may be glued to the name: "heybanter"
	flagAbout                               // after a sentence-initial name, a statement about it: "is", "said"
	flagFiller                              // carries no content on its own: "uh huh", "yeah ok"
	flagNoise                               // a pure backchannel: "uh", "mm"
	flagQuestion                            // opens a question: "what", "can", "is"
	flagWh                                  // a wh-word: "what", "how"
	flagAux                                 // auxiliary, modal or copula: "is", "can", "did", "that's"
	flagSubject                             // a subject pronoun, for inversions: "is it", "can you"
	flagSecond                              // second person: "you", "your"
	flagOpener                              // starts a new clause after a vocative: "I", "you", "let's"
	flagImperative                          // a common imperative at the start of a sentence: "tell", "play"
	flagAddrStart                           // other sentence starts that speak to someone: "any ideas", "got a minute"
	flagDet                                 // determiner, possessive or quantifier: "the", "my", "some"
	flagAdj                                 // an adjective or adverb that modifies a noun: "good", "just"
	flagPrep                                // a preposition: "about", "of", "to"
	flagVerb                                // a verb that takes the name as its object: "love", "ask", "said"
	flagConj                                // a conjunction or subordinator: "and", "if"
	flagEnder                               // closes a clause: "me", "here", "again", "one"
	flagTail                                // trails a clause: "lol", "please", "mate"
	flagReport                              // introduces quoted speech: "said", "goes"
	flagCopula                              // a copula: "is", "that's", "I'm"
	flagGroup                               // addresses a group, not a person: "guys", "everyone"
	flagIndefinite                          // an indefinite subject asking the room: "anyone", "someone"
)

// flagTaker marks words after which the name is an argument, never a
// vocative: "the banter", "good banter", "about banter", "love banter".
const flagTaker = flagDet | flagAdj | flagPrep | flagVerb | flagAux | flagConj

// wordEntry is one word of the lists below with the lists it is in.
type wordEntry struct {
	word string
	flag wordFlag
}

// wordTable indexes the word lists below by first letter (0-25; 26 for
// anything else) and length in bytes. It is built once and only read
// afterwards. Buckets hold a handful of words, which beats hashing for
// these short lookups.
var wordTable = func() (t [27][maxListWord + 1][]wordEntry) {
	for _, l := range []struct {
		words []string
		flag  wordFlag
	}{
		{greetingWords, flagGreeting}, {discourseWords, flagDiscourse}, {mergedGreetings, flagMergedGreeting},
		{aboutWords, flagAbout}, {fillerWords, flagFiller}, {noiseWords, flagNoise},
		{questionWords, flagQuestion}, {whWords, flagWh | flagQuestion}, {auxWords, flagAux},
		{subjectWords, flagSubject}, {secondWords, flagSecond}, {openerWords, flagOpener},
		{imperativeWords, flagImperative}, {addrStartWords, flagAddrStart}, {detWords, flagDet},
		{adjWords, flagAdj}, {prepWords, flagPrep}, {verbWords, flagVerb}, {conjWords, flagConj},
		{enderWords, flagEnder}, {tailWords, flagTail}, {reportWords, flagReport | flagVerb},
		{copulaWords, flagCopula | flagAux}, {groupWords, flagGroup},
		{intlGreetingWords, flagGreeting}, {intlDiscourseWords, flagDiscourse}, {intlAboutWords, flagAbout},
		{intlTailWords, flagTail}, {intlEnderWords, flagEnder}, {intlAdjWords, flagAdj}, {commandWords, flagVerb},
		{indefiniteWords, flagIndefinite},
	} {
		for _, w := range l.words {
			b := &t[bucket(w[0])][len(w)]
			found := false
			for i := range *b {
				if (*b)[i].word == w {
					(*b)[i].flag |= l.flag
					found = true
				}
			}
			if !found {
				*b = append(*b, wordEntry{w, l.flag})
			}
		}
	}
	return t
}()

func bucket(c byte) int {
	if 'a' <= c && c <= 'z' {
		return int(c - 'a')
	}
	return 26
}

const maxListWord = 24 // longer words (in bytes) are in no list

// lookupWord returns the list flags of w (ASCII case-insensitive; ’ counts
// as '; capitals of any script fold). A word not in the lists is tried again with
// held letters let go ("heyyy", "hiii", "thanksss"). It does not allocate.
func lookupWord(w string) wordFlag {
	var buf [maxListWord]byte
	n := foldWord(w, &buf)
	if n == 0 {
		return 0
	}
	if f := lookupFolded(buf[:n]); f != 0 {
		return f
	}
	// Held letters (a run of three, or a doubled last letter: "hiii",
	// "heyy"): runs of three or more to one, then doubles to one.
	held := n > 2 && buf[n-1] == buf[n-2] && buf[n-1] < utf8.RuneSelf
	for i := 2; i < n && !held; i++ {
		held = buf[i] == buf[i-1] && buf[i] == buf[i-2] && buf[i] < utf8.RuneSelf
	}
	if !held {
		return 0
	}
	var short [maxListWord]byte
	m := 0
	for i := 0; i < n; i++ {
		if m > 0 && short[m-1] == buf[i] && buf[i] < utf8.RuneSelf && (i+1 < n && buf[i+1] == buf[i] || m > 1 && short[m-2] == buf[i]) {
			continue
		}
		short[m] = buf[i]
		m++
	}
	if f := lookupFolded(short[:m]); f != 0 {
		return f
	}
	m = 0
	for i := 0; i < n; i++ {
		if m > 0 && short[m-1] == buf[i] && buf[i] < utf8.RuneSelf {
			continue
		}
		short[m] = buf[i]
		m++
	}
	return lookupFolded(short[:m])
}

// lookupFolded returns the list flags of a lower-cased word.
func lookupFolded(w []byte) wordFlag {
	for _, e := range wordTable[bucket(w[0])][len(w)] {
		if e.word == string(w) {
			return e.flag
		}
	}
	return 0
}

// foldWord writes w lower-cased into buf (’ as ', any capital folded to its
// small letter: "OLÁ", "SAĞOL", "ПРИВЕТ") and returns its length, 0 when it is
// empty or too long for the lists.
func foldWord(w string, buf *[maxListWord]byte) int {
	if len(w) == 0 || len(w) > maxListWord*3 {
		return 0
	}
	n := 0
	for i := 0; i < len(w); {
		c := w[i]
		if c < utf8.RuneSelf {
			if n == len(buf) {
				return 0
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[n] = c
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(w[i:])
		i += size
		if r == '’' {
			r = '\''
		} else {
			r = unicode.ToLower(r)
		}
		if n+utf8.RuneLen(r) > len(buf) {
			return 0
		}
		n += utf8.EncodeRune(buf[n:], r)
	}
	return n
}

// isWord reports whether w is one of words (ASCII case-insensitive).
func isWord(w string, words ...string) bool {
	for _, x := range words {
		if strings.EqualFold(w, x) {
			return true
		}
	}
	return false
}

// Word lists. They are read-only; the matcher never changes them.
var (
	// greetingWords greet or thank: a name right after them addresses the
	// bot ("hey banter", "thanks banter", "hola banter"). A few languages.
	greetingWords = []string{
		"hey", "hi", "hello", "heya", "hiya", "howdy", "yo", "oi", "sup", "hallo", "hullo", "hola", "salut",
		"ciao", "bonjour", "bonsoir", "coucou", "buenos", "buenas", "días", "dias", "tardes", "noches",
		"olá", "ola", "bom", "boa", "dia", "noite", "guten", "morgen", "abend", "moin", "servus", "hej", "hei",
		"hoi", "ahoj", "privet", "namaste", "salaam", "salam", "shalom", "merhaba", "selam", "günaydın",
		"günaydin", "gunaydin", "sağol", "sagol", "konnichiwa", "buongiorno",
		"buonasera", "please", "pls", "plz", "thanks", "thank", "thx", "ty", "tysm", "cheers", "appreciated",
		"gracias", "merci", "danke", "grazie", "obrigado", "obrigada", "tak", "kiitos", "morning", "evening",
		"afternoon", "night", "nite", "gm", "gn", "bye", "goodbye", "cya", "welcome", "dear", "congrats",
		"c'mon", "cmon", "goodnight", "goodmorning", "aloha", "g'day", "gday", "greetings", "hai",
	}
	// discourseWords open a sentence without content; the name after them
	// is read as if it started the sentence ("ok so banter aside" is not
	// addressed, "ok so banter, thoughts?" is).
	discourseWords = []string{
		"ok", "okay", "k", "alright", "so", "well", "oh", "ah", "um", "uh", "er", "and", "but", "hm", "hmm",
		"lol", "lmao", "haha", "wait", "sorry", "yeah", "yes", "yep", "nah", "right", "anyway", "anyways",
		"also", "actually", "now", "look", "listen", "man", "dude", "bro", "welp", "ugh", "wow", "ooh", "aw",
		"honestly", "seriously", "literally", "basically", "frankly", "tbh", "ngl", "btw", "fr", "anyhow",
	}
	// mergedGreetings may be glued to the name ("heybanter", "yobanter").
	mergedGreetings = []string{"hey", "hi", "hello", "yo", "oi", "ok", "okay", "heya", "hiya", "thanks", "thankyou"}
	// aboutWords after a sentence-initial name make it a statement about
	// the bot ("banter is great", "banter said no", "banter aside"), unless
	// an inversion follows ("banter is it raining").
	aboutWords = []string{
		"is", "was", "isn't", "isnt", "wasn't", "wasnt", "has", "had", "hasn't", "said", "says",
		"seems", "sounds", "sounded", "and", "or", "just", "thinks", "thought", "knows", "told",
		"also", "always", "never", "gets", "got", "keeps", "kept", "likes", "liked", "went",
		"did", "didn't", "does", "doesn't", "would", "wouldn't", "can't", "cannot", "won't",
		"bot", "again", "too", "itself", "here", "there", "aside", "in", "on", "at", "of", "from",
		"with", "like", "about", "vs", "versus", "than", "being", "nights", "night", "channel",
	}
	// fillerWords carry no content on their own ("uh huh", "yeah ok").
	fillerWords = []string{
		"uh", "um", "umm", "uhm", "er", "erm", "ah", "oh", "huh", "hm", "hmm", "mm", "mhm",
		"mmhm", "yeah", "yea", "yep", "yup", "yes", "no", "nope", "nah", "ok", "okay", "k",
		"right", "sure", "cool", "nice", "wow", "lol", "haha", "hah", "ha", "heh", "so",
		"well", "like", "alright", "oops", "whoa", "ooh", "aha", "true", "damn", "hey", "hi",
		"hello", "yo", "oi", "thanks", "thank", "you", "bye", "gotcha", "indeed", "exactly",
		"totally", "okey", "dokey", "uhh", "umm", "ahh", "ohh", "i", "see", "hmmm",
	}
	// noiseWords are backchannels that never carry an answer.
	noiseWords = []string{"uh", "um", "umm", "uhm", "uhh", "er", "erm", "ah", "ahh", "oh", "ohh",
		"huh", "hm", "hmm", "hmmm", "mm", "mhm", "mmhm"}
	// questionWords open a question even when the ASR drops the '?'.
	questionWords = []string{
		"can", "could", "would", "should", "will", "is", "are", "do", "does", "did", "have", "has",
		"was", "were", "am", "may", "might", "shall", "isn't", "aren't", "don't", "doesn't", "didn't",
		"wouldn't", "couldn't", "shouldn't", "whatcha",
	}
	whWords = []string{
		"what", "what's", "whats", "why", "how", "how's", "hows", "who", "who's", "whos", "where",
		"where's", "wheres", "when", "which", "whom", "wut", "wat",
	}
	auxWords = []string{
		"is", "was", "are", "were", "be", "been", "being", "am", "it's", "its", "that's", "thats",
		"there's", "here's", "he's", "she's", "who's", "what's", "isn't", "wasn't", "aren't", "do",
		"does", "did", "don't", "doesn't", "didn't", "can", "could", "will", "would", "should", "shall",
		"may", "might", "must", "can't", "won't", "has", "have", "had", "gonna", "wanna", "gotta", "i'm",
		"im", "we're", "they're", "you're", "youre",
	}
	copulaWords = []string{
		"is", "was", "are", "were", "be", "been", "being", "am", "it's", "that's", "thats", "there's",
		"here's", "he's", "she's", "who's", "what's", "i'm", "im", "we're", "they're", "you're", "youre",
		"isn't", "wasn't", "aren't", "ain't",
	}
	groupWords = []string{
		"guys", "everyone", "everybody", "folks", "people", "all", "y'all", "yall", "lads", "team",
		"chat", "friends", "gang", "fam", "peeps",
	}
	subjectWords = []string{
		"i", "you", "u", "ya", "we", "they", "he", "she", "it", "there", "this", "that", "these",
		"those", "anyone", "anybody", "someone", "everyone", "y'all", "yall",
	}
	secondWords = []string{
		"you", "u", "ya", "your", "ur", "you're", "youre", "yours", "yourself", "you've", "you'll",
		"you'd", "y'all", "yall",
	}
	// openerWords start a clause after a vocative: "banter you there?",
	// "I need a hand banter can you ...".
	openerWords = []string{
		"i", "i'm", "im", "i've", "i'll", "i'd", "you", "you're", "youre", "u", "we", "we're",
		"let's", "lets", "please", "pls", "plz", "here's", "heres",
	}
	imperativeWords = []string{
		"tell", "give", "show", "play", "say", "help", "stop", "let", "let's", "lets", "make", "find",
		"check", "remind", "explain", "describe", "sing", "read", "come", "go", "wait", "try", "do",
		"don't", "get", "put", "turn", "set", "pick", "guess", "name", "list", "search", "translate",
		"define", "summarize", "summarise", "calculate", "write", "draw", "send", "open", "skip",
		"pause", "resume", "repeat", "speak", "talk", "answer", "bring", "keep", "take", "hurry",
		"shut", "wake", "hold", "roll", "flip", "choose", "recommend", "suggest", "teach", "be",
		"stay", "start", "cancel", "mute", "unmute", "join", "leave", "share", "look", "listen",
		"settle", "quick", "hit", "run", "count", "rate", "rank", "compare", "fix", "ping",
	}
	addrStartWords = []string{"any", "anything", "got", "know", "wanna", "want", "care", "mind", "happy", "merry",
		"congratulations", "congrats", "hope"}
	detWords = []string{
		"the", "a", "an", "this", "that", "these", "those", "my", "your", "our", "their", "his", "her",
		"its", "some", "any", "no", "much", "more", "less", "most", "all", "such", "every", "each",
		"enough", "another", "other", "lots", "plenty", "few", "several",
		"whose", "ur", "yer", "le", "la", "el", "los", "las", "der", "die", "das", "il",
	}
	adjWords = []string{
		"good", "great", "nice", "fine", "friendly", "light", "lighthearted", "playful", "witty", "clever",
		"funny", "fun", "silly", "harmless", "classic", "typical", "usual", "casual", "idle", "cheeky",
		"gentle", "quality", "top", "bad", "terrible", "awful", "excellent", "amazing", "quick", "sharp",
		"dry", "real", "pure", "mere", "just", "only", "even", "not", "really", "old", "new", "endless",
		"constant", "random", "genuine", "obvious", "political", "pointless", "little", "big", "small",
		"weak", "strong", "decent", "solid", "proper", "lovely", "brilliant", "epic", "light-hearted",
		"usual", "daily", "late-night", "whole", "entire", "same", "favourite", "favorite",
	}
	prepWords = []string{
		"about", "of", "with", "without", "for", "to", "from", "into", "onto", "at", "by", "like",
		"unlike", "than", "as", "via", "per", "re", "regarding", "towards", "toward", "against",
		"between", "among", "amongst", "through", "throughout", "during", "despite", "except",
		"beyond", "within", "upon", "under", "behind", "beside", "besides", "near", "on", "in",
		"after", "before", "until", "till", "vs", "versus", "called", "named",
	}
	verbWords = []string{
		"love", "loves", "loved", "loving", "like", "likes", "liked", "enjoy", "enjoys", "enjoyed",
		"enjoying", "hate", "hates", "hated", "miss", "misses", "missed", "need", "needs", "want",
		"wants", "prefer", "appreciate", "call", "calls", "calling", "ask", "asks", "asked", "asking",
		"tell", "told", "telling", "ping", "pinged", "mute", "muted", "kick", "kicked", "ban",
		"banned", "blame", "trust", "use", "used", "using", "invite", "invited", "meet", "met", "add",
		"added", "remove", "removed", "restart", "restarted", "reboot", "fix", "fixed", "update",
		"updated", "install", "installed", "made", "make", "built", "build", "ignore", "ignored",
		"ignoring", "mention", "mentioned", "summon", "summoned", "keep", "hear", "heard", "see",
		"saw", "seen", "watch", "watched", "know", "knew", "try", "tried", "trying", "test", "tested",
		"testing", "check", "checked", "cut", "stop", "stopped", "configure", "configured",
		"thank", "greet", "greeted", "beat", "beats", "killed", "kill", "inviting", "adding",
		"doing", "having", "making", "getting", "taking", "giving", "watching", "reading", "writing",
		"posting", "sharing", "hearing", "seeing", "handle", "handling", "reset", "follow", "following",
		"let's", "lets",
	}
	conjWords = []string{
		"and", "or", "nor", "but", "plus", "&", "if", "whether", "because", "cause", "cuz", "unless",
		"while", "although", "since", "so", "than", "then", "where", "when",
	}
	// enderWords close a clause: a name right after them is a vocative
	// ("can you hear me banter", "I need a hand here banter", "nice one
	// banter").
	enderWords = []string{
		"me", "you", "u", "ya", "us", "him", "them", "it", "here", "there", "now", "today", "tonight",
		"tomorrow", "again", "too", "please", "pls", "plz", "though", "tho", "already", "yet",
		"anyway", "lol", "haha", "mate", "man", "dude", "bro", "buddy", "pal", "ok", "okay", "yes",
		"yeah", "yep", "thanks", "thx", "ty", "right", "sir", "one", "job", "work", "try", "call",
		"catch", "point", "answer", "idea", "effort", "shot", "save", "stuff", "done", "down",
		"off", "back", "guys", "everyone", "first", "later", "sometime", "soon", "sorry", "what",
		"huh", "eh", "seriously", "exactly", "rn", "asap", "bot", "bestie", "friend", "way",
	}
	// tailWords may trail a vocative before the end of the sentence
	// ("where are my keys banter lol").
	tailWords = []string{
		"lol", "lmao", "haha", "hahaha", "xd", "pls", "plz", "please", "thanks", "thx", "ty",
		"mate", "bro", "dude", "rn", "asap", "tho", "though", "again",
	}
	// reportWords introduce quoted speech: "he said banter stop",
	// "then he goes thanks banter".
	reportWords = []string{
		"said", "says", "say", "saying", "goes", "went", "typed", "types", "wrote", "writes", "yelled",
		"shouted", "screamed", "whispered", "like",
	}
)
