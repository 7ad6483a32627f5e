package realset

// The catalogue: which recordings of the data directory (make vad-data) are
// used, by split. Paths are relative to the data directory, whose root/
// holds the Debian packages' files as dpkg-deb extracts them (make vad-data,
// scripts/vaddata.sh). bench/vad/README.md lists the packages,
// their licences and why each source is in the split it is in.

// Splits returns the set's splits: test (reported), dev (for tuning) and
// fresh (a second held-out split, from packages never used while tuning or
// reporting before 2026-11-29: other speakers, other music).
func Splits() []string { return []string{"test", "dev", "fresh"} }

// BabbleSplit returns the split whose speakers talk in split's babble: the
// test split's babble is dev's voices, dev's is test's, and fresh's is
// dev's (background only: the fresh split's own voices never).
func BabbleSplit(split string) string {
	if split == "dev" {
		return "test"
	}
	return "dev"
}

// Speaker is one real talker and where their recordings are.
type Speaker struct {
	Name  string
	Split string
	// Gender is "f" or "m" where the source says so; "" to label it by
	// median pitch (MedianPitch under 160 Hz: "m").
	Gender string
	Source string   // the Debian package
	Files  []string // glob patterns relative to the data directory
	// Prompts: Files are Asterisk prompts, one sentence each, named by
	// their English words; only those of at least three words and 1.5-8 s
	// are used. Otherwise a file may hold several phrases, cut at pauses
	// of 250 ms or more.
	Prompts bool
	// ShortNames: the prompts' names are abbreviations, not their words
	// (older Asterisk prompt packages: "conf-getpin"), so the three-word
	// rule is off; names with digits, "tone" or "beep" are still left out,
	// and every prompt is 1.5-8 s.
	ShortNames bool
	Items      int // speech items to take
	Pauses     int // sentences to take for pause items (Prompts only)
}

// Track is one piece of real music.
type Track struct {
	Name   string
	Type   string // a music noise type
	Split  string
	Source string
	File   string
}

const (
	c2        = "root/usr/share/codec2/raw/"
	asterisk  = "root/usr/share/asterisk/sounds/"
	moh       = "root/usr/share/asterisk/moh/"
	wesnoth   = "root/usr/share/games/wesnoth/1.16/data/core/music/"
	freedroid = "root/usr/share/freedroidrpg/data/sound/music/"
	colobot   = "root/usr/share/games/colobot/music/"
	fillets   = "root/usr/share/games/fillets-ng/sound/"
	// Keyboard is the directory of bucklespring's IBM Model M recordings:
	// NN-0.wav a key's press and NN-1.wav its release, NN its scan code.
	Keyboard = "root/usr/share/buckle/wav/"
)

// Speakers returns every talker. Each split's speech items come from its own
// speakers; its babble is made of BabbleSplit's speakers (their recordings
// not used as that split's items), so babble never holds a voice of the
// clip's own split.
func Speakers() []Speaker {
	return []Speaker{
		// test
		{Name: "allison", Split: "test", Gender: "f", Source: "asterisk-core-sounds-en-g722, -es-g722",
			Files: []string{asterisk + "en_US_f_Allison/*.g722", asterisk + "es_MX_f_Allison/*.g722"}, Prompts: true, Items: 8, Pauses: 3},
		{Name: "carlo", Split: "test", Gender: "m", Source: "asterisk-core-sounds-it-g722",
			Files: []string{asterisk + "it_IT_m_Carlo/*.g722"}, Prompts: true, Items: 8, Pauses: 3},
		{Name: "codec2-hts1", Split: "test", Source: "codec2-examples", Files: []string{c2 + "hts1.raw"}, Items: 2},
		{Name: "codec2-forig", Split: "test", Source: "codec2-examples", Files: []string{c2 + "forig.raw"}, Items: 1},
		{Name: "codec2-kristoff", Split: "test", Source: "codec2-examples", Files: []string{c2 + "kristoff.raw"}, Items: 1},
		{Name: "codec2-cq_ref", Split: "test", Source: "codec2-examples", Files: []string{c2 + "cq_ref.raw"}, Items: 2},
		// dev
		{Name: "june", Split: "dev", Gender: "f", Source: "asterisk-core-sounds-fr-g722",
			Files: []string{asterisk + "fr_CA_f_June/*.g722"}, Prompts: true, Items: 8, Pauses: 3},
		{Name: "ivrvoiceru", Split: "dev", Gender: "f", Source: "asterisk-core-sounds-ru-g722",
			Files: []string{asterisk + "ru_RU_f_IvrvoiceRU/*.g722"}, Prompts: true, Items: 8, Pauses: 3},
		{Name: "codec2-hts2", Split: "dev", Source: "codec2-examples", Files: []string{c2 + "hts2.raw"}, Items: 2},
		{Name: "codec2-morig", Split: "dev", Source: "codec2-examples", Files: []string{c2 + "morig.raw"}, Items: 1},
		{Name: "codec2-mmt1", Split: "dev", Source: "codec2-examples", Files: []string{c2 + "mmt1.raw"}, Items: 1},
		{Name: "codec2-big_dog", Split: "dev", Source: "codec2-examples", Files: []string{c2 + "big_dog.raw"}, Items: 1},
		// fresh
		{Name: "menardi", Split: "fresh", Gender: "f", Source: "asterisk-prompt-it-menardi-wav",
			Files: []string{asterisk + "it_IT_f_Menardi/*.wav"}, Prompts: true, ShortNames: true, Items: 8, Pauses: 3},
		{Name: "armelle", Split: "fresh", Gender: "f", Source: "asterisk-prompt-fr-armelle",
			Files: []string{asterisk + "fr/*.gsm"}, Prompts: true, ShortNames: true, Items: 8, Pauses: 3},
		{Name: "avatar-es-co", Split: "fresh", Source: "asterisk-prompt-es-co",
			Files: []string{asterisk + "es/*.gsm"}, Prompts: true, ShortNames: true, Items: 8, Pauses: 3},
		// Fish Fillets' voice actors, Czech and Dutch: the big fish (a man's voice,
		// the game's male character) and the small fish (a woman's), one line of
		// dialogue a file
		{Name: "fillets-cs-big", Split: "fresh", Gender: "m", Source: "fillets-ng-data-cs",
			Files: []string{fillets + "*/cs/*-v-*.ogg"}, Prompts: true, ShortNames: true, Items: 8, Pauses: 3},
		{Name: "fillets-cs-small", Split: "fresh", Gender: "f", Source: "fillets-ng-data-cs",
			Files: []string{fillets + "*/cs/*-m-*.ogg"}, Prompts: true, ShortNames: true, Items: 8, Pauses: 3},
		{Name: "fillets-nl-big", Split: "fresh", Gender: "m", Source: "fillets-ng-data-nl",
			Files: []string{fillets + "*/nl/*-v-*.ogg"}, Prompts: true, ShortNames: true, Items: 8, Pauses: 3},
		{Name: "fillets-nl-small", Split: "fresh", Gender: "f", Source: "fillets-ng-data-nl",
			Files: []string{fillets + "*/nl/*-m-*.ogg"}, Prompts: true, ShortNames: true, Items: 8, Pauses: 3},
	}
}

// Music types in table order.
const (
	MusicOrchestral = "music-orchestral"
	MusicFolk       = "music-folk"
	MusicMelodic    = "music-melodic"
	MusicAmbient    = "music-ambient"
	MusicElectronic = "music-electronic"
	// the fresh split's other music, named by its source: the pieces of
	// Wesnoth and FreedroidRPG that test and dev do not use, and Colobot's
	// (a third game and composer), whose least periodic tracks make
	// music-colobot and whose most periodic (synthesizer leads) the fresh
	// split's music-melodic
	MusicWesnoth   = "music-wesnoth"
	MusicFreedroid = "music-freedroid"
	MusicColobot   = "music-colobot"
)

// Tracks returns the music. Types: orchestral (Wesnoth's orchestral themes),
// folk (Wesnoth's folk-styled pieces and an acoustic guitar piece),
// melodic (pieces where one melodic line carries the music: over a third
// of their 20 ms frames are strongly periodic, the most of all tracks
// looked at in test and dev), ambient (pads and drones) and electronic
// (synthesizers and drum machines). The fresh split's music is named by its
// source (MusicWesnoth, MusicFreedroid, MusicColobot) but for its
// music-melodic: Colobot's four most periodic tracks (61-88 % of their
// frames, where test's melodic tracks have 42 %).
func Tracks() []Track {
	return []Track{
		{"loyalists", MusicOrchestral, "test", "wesnoth-1.16-music", wesnoth + "loyalists.ogg"},
		{"heroes_rite", MusicOrchestral, "test", "wesnoth-1.16-music", wesnoth + "heroes_rite.ogg"},
		{"the_king_is_dead", MusicOrchestral, "test", "wesnoth-1.16-music", wesnoth + "the_king_is_dead.ogg"},
		{"legends_of_the_north", MusicOrchestral, "dev", "wesnoth-1.16-music", wesnoth + "legends_of_the_north.ogg"},
		{"the_city_falls", MusicOrchestral, "dev", "wesnoth-1.16-music", wesnoth + "the_city_falls.ogg"},
		{"weight_of_revenge", MusicOrchestral, "dev", "wesnoth-1.16-music", wesnoth + "weight_of_revenge.ogg"},

		{"traveling_minstrels", MusicFolk, "test", "wesnoth-1.16-music", wesnoth + "traveling_minstrels.ogg"},
		{"knolls", MusicFolk, "test", "wesnoth-1.16-music", wesnoth + "knolls.ogg"},
		{"manolo_camp-morning_coffee", MusicFolk, "test", "asterisk-moh-opsound-g722", moh + "manolo_camp-morning_coffee.g722"},
		{"wanderer", MusicFolk, "dev", "wesnoth-1.16-music", wesnoth + "wanderer.ogg"},
		{"elvish-theme", MusicFolk, "dev", "wesnoth-1.16-music", wesnoth + "elvish-theme.ogg"},

		{"love_theme", MusicMelodic, "test", "wesnoth-1.16-music", wesnoth + "love_theme.ogg"},
		{"the_deep_path", MusicMelodic, "test", "wesnoth-1.16-music", wesnoth + "the_deep_path.ogg"},
		{"silvan_sanctuary", MusicMelodic, "dev", "wesnoth-1.16-music", wesnoth + "silvan_sanctuary.ogg"},
		{"sad", MusicMelodic, "dev", "wesnoth-1.16-music", wesnoth + "sad.ogg"},
		{"revelation", MusicMelodic, "dev", "wesnoth-1.16-music", wesnoth + "revelation.ogg"},

		{"macroform-cold_day", MusicAmbient, "test", "asterisk-moh-opsound-g722", moh + "macroform-cold_day.g722"},
		{"Ambience", MusicAmbient, "test", "freedroidrpg-data", freedroid + "Ambience.ogg"},
		{"macroform-the_simplicity", MusicAmbient, "dev", "asterisk-moh-opsound-g722", moh + "macroform-the_simplicity.g722"},
		{"temple", MusicAmbient, "dev", "freedroidrpg-data", freedroid + "temple.ogg"},

		{"reno_project-system", MusicElectronic, "test", "asterisk-moh-opsound-g722", moh + "reno_project-system.g722"},
		{"Hyperbattle", MusicElectronic, "test", "freedroidrpg-data", freedroid + "Hyperbattle.ogg"},
		{"TechBattle", MusicElectronic, "test", "freedroidrpg-data", freedroid + "TechBattle.ogg"},
		{"macroform-robot_dity", MusicElectronic, "dev", "asterisk-moh-opsound-g722", moh + "macroform-robot_dity.g722"},
		{"Bleostrada", MusicElectronic, "dev", "freedroidrpg-data", freedroid + "Bleostrada.ogg"},
		{"hellforce", MusicElectronic, "dev", "freedroidrpg-data", freedroid + "hellforce.ogg"},

		// fresh
		{"battle", MusicWesnoth, "fresh", "wesnoth-1.16-music", wesnoth + "battle.ogg"},
		{"the_dangerous_symphony", MusicWesnoth, "fresh", "wesnoth-1.16-music", wesnoth + "the_dangerous_symphony.ogg"},
		{"into_the_shadows", MusicWesnoth, "fresh", "wesnoth-1.16-music", wesnoth + "into_the_shadows.ogg"},
		{"journeys_end", MusicWesnoth, "fresh", "wesnoth-1.16-music", wesnoth + "journeys_end.ogg"},

		{"ImperialArmy", MusicFreedroid, "fresh", "freedroidrpg-data", freedroid + "ImperialArmy.ogg"},
		{"town", MusicFreedroid, "fresh", "freedroidrpg-data", freedroid + "town.ogg"},
		{"Suspicion", MusicFreedroid, "fresh", "freedroidrpg-data", freedroid + "Suspicion.ogg"},
		{"NewTutorialStage", MusicFreedroid, "fresh", "freedroidrpg-data", freedroid + "NewTutorialStage.ogg"},

		{"music002", MusicColobot, "fresh", "colobot-common-sounds", colobot + "music002.ogg"},
		{"music008", MusicColobot, "fresh", "colobot-common-sounds", colobot + "music008.ogg"},
		{"music012", MusicColobot, "fresh", "colobot-common-sounds", colobot + "music012.ogg"},
		{"Infinite", MusicColobot, "fresh", "colobot-common-sounds", colobot + "Infinite.ogg"},

		{"music004", MusicMelodic, "fresh", "colobot-common-sounds", colobot + "music004.ogg"},
		{"Hv2", MusicMelodic, "fresh", "colobot-common-sounds", colobot + "Hv2.ogg"},
		{"Proton", MusicMelodic, "fresh", "colobot-common-sounds", colobot + "Proton.ogg"},
		{"Prototype", MusicMelodic, "fresh", "colobot-common-sounds", colobot + "Prototype.ogg"},
	}
}

// Types returns the noise types in table order: the music types, then real
// keyboard typing and babble, then mains hum and coloured noise.
func Types() []string {
	return []string{
		MusicOrchestral, MusicFolk, MusicMelodic, MusicAmbient, MusicElectronic,
		MusicWesnoth, MusicFreedroid, MusicColobot,
		"keyboard", "babble", "hum50", "hum60", "white", "pink", "brown",
	}
}
