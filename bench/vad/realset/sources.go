package realset

// The catalogue: which recordings of the data directory (make vad-data) are
// used, by split. Paths are relative to the data directory, whose root/
// holds the Debian packages' files as dpkg-deb extracts them (make vad-data,
// scripts/vaddata.sh). bench/vad/README.md lists the packages,
// their licences and why each source is in the split it is in.

// Splits returns the set's splits: test (reported) and dev (for tuning).
func Splits() []string { return []string{"test", "dev"} }

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
	Items   int // speech items to take
	Pauses  int // sentences to take for pause items (Prompts only)
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
	// Keyboard is the directory of bucklespring's IBM Model M recordings:
	// NN-0.wav a key's press and NN-1.wav its release, NN its scan code.
	Keyboard = "root/usr/share/buckle/wav/"
)

// Speakers returns every talker. Each split's speech items come from its own
// speakers; its babble is made of the other split's speakers (their
// recordings not used as that split's items), so babble never holds a
// voice of the clip's own split.
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
	}
}

// Music types in table order.
const (
	MusicOrchestral = "music-orchestral"
	MusicFolk       = "music-folk"
	MusicMelodic    = "music-melodic"
	MusicAmbient    = "music-ambient"
	MusicElectronic = "music-electronic"
)

// Tracks returns the music. Types: orchestral (Wesnoth's orchestral themes),
// folk (Wesnoth's folk-styled pieces and an acoustic guitar piece),
// melodic (pieces where one melodic line carries the music: over a third
// of their 20 ms frames are strongly periodic, the most of all tracks
// looked at), ambient (pads and drones) and electronic (synthesizers and
// drum machines).
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
	}
}

// Types returns the noise types in table order: the music types, then real
// keyboard typing and babble, then mains hum and coloured noise.
func Types() []string {
	return []string{
		MusicOrchestral, MusicFolk, MusicMelodic, MusicAmbient, MusicElectronic,
		"keyboard", "babble", "hum50", "hum60", "white", "pink", "brown",
	}
}
