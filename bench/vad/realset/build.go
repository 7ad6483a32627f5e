package realset

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/bench/vad/noisyset"
)

// SpeechLevelDB is the active level every speech item is scaled to (RMS of
// its speech frames, dBFS); a noise at SNR s dB has an RMS of
// SpeechLevelDB-s over its stretch.
const SpeechLevelDB = -26

// SNRs are the mixing levels in dB.
func SNRs() []float64 { return []float64{20, 10, 5} }

// Pauses are the pauses inserted into pause items, in order.
func Pauses() []time.Duration {
	return []time.Duration{300 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond,
		600 * time.Millisecond, 700 * time.Millisecond, 800 * time.Millisecond}
}

// Lead and Gap are the noise before a clip's first item and after each.
const (
	Lead = 3 * Rate
	Gap  = 5 * Rate / 2
)

// BabbleRecordings is how many of a speaker's recordings (beyond those used
// as items) are loaded for babble, when the speaker has that many.
const BabbleRecordings = 40

// MusicAloneSeconds is the least noise-alone music per type and SNR; it is
// spread over the type's tracks in the split, at least NoiseSeconds each.
const MusicAloneSeconds = 200

// Item is one speech item in a clip.
type Item struct {
	Name    string // speaker/file[#phrase][+pause]
	Speaker string
	Gender  string
	Rate    int // the source recording's sample rate (8000: narrowband)
	// Start and End are the item's speech (first to last speech frame), in
	// samples from the clip's start.
	Start, End int
	// Pause is a pause item's pause: the whole stretch without speech
	// between two words (the speaker's own gap and the silence inserted
	// into it). Inserted is the silence inserted, and PauseAt where, in
	// samples from the clip's start.
	Pause    time.Duration
	Inserted time.Duration
	PauseAt  int
}

// Clip is one stream of the set, 16 kHz mono.
type Clip struct {
	// Type is "clean", "pause" or one of Types.
	Type  string
	SNR   float64 // dB; 0 for clean and pause
	Items []Item  // none for a noise-alone clip
	// Sources names the recordings a noise-alone or background stream was
	// cut from.
	Sources []string
	// Speech marks the 20 ms frames holding speech (Label on each clean
	// item).
	Speech  []bool
	Samples []int16
}

// Seconds returns the clip's length in seconds.
func (c Clip) Seconds() float64 { return float64(len(c.Samples)) / Rate }

// SpeakerInfo is a speaker as used in a split.
type SpeakerInfo struct {
	Speaker
	GenderBy   string  // "source" or "pitch"
	MedianF0   float64 // Hz, over the items used
	Rate       int     // the recordings' sample rate
	ItemSecs   float64 // seconds of speech items
	PauseItems int
}

// Set is one split of the evaluation set.
type Set struct {
	Split    string
	Speakers []SpeakerInfo
	Babble   []string // the speakers the babble is made of
	Tracks   []Track
	Clips    []Clip
}

// Options selects and sizes a set.
type Options struct {
	Dir          string // the data directory (make vad-data)
	Split        string // one of Splits: "test", "dev" or "fresh"
	Seed         uint64 // fixed: the same seed gives the same samples
	NoiseSeconds int    // length of each noise-alone clip (music: see MusicAloneSeconds)
	// Types restricts the noise types (nil: all of Types); clean and pause
	// are always built.
	Types []string
}

// segment is one prepared speech recording: scaled, labelled.
type segment struct {
	name     string
	speaker  *SpeakerInfo
	s        []float32
	lab      []bool
	pause    time.Duration
	pauseAt  int           // samples into s
	inserted time.Duration // of the pause, the silence inserted (the rest is the speaker's own gap)
}

// Build builds the split's clips.
func Build(o Options) (*Set, error) {
	if !slices.Contains(Splits(), o.Split) {
		return nil, fmt.Errorf("realset: split %q, want one of %v", o.Split, Splits())
	}
	if err := Check(o.Dir); err != nil {
		return nil, err
	}
	if o.NoiseSeconds <= 0 {
		o.NoiseSeconds = 60
	}
	set := &Set{Split: o.Split}
	var items, pauses []segment
	var babble [][][]float32
	for _, sp := range Speakers() {
		own := sp.Split == o.Split
		if !own && sp.Split != BabbleSplit(o.Split) {
			continue
		}
		info := &SpeakerInfo{Speaker: sp, GenderBy: "source"}
		it, ps, rest, err := speakerItems(o.Dir, sp, info, o.Seed)
		if err != nil {
			return nil, err
		}
		if own {
			items = append(items, it...)
			pauses = append(pauses, ps...)
			set.Speakers = append(set.Speakers, *info)
			continue
		}
		// the babble split's speakers talk in the babble, from recordings
		// that split does not use as items
		if len(rest) == 0 {
			rest = it
		}
		var recs [][]float32
		for _, r := range rest {
			recs = append(recs, r.s)
		}
		babble = append(babble, recs)
		set.Babble = append(set.Babble, sp.Name)
	}
	if len(babble) < 4 {
		return nil, fmt.Errorf("realset: %d babble speakers, want at least 4", len(babble))
	}
	for _, t := range Tracks() {
		if t.Split == o.Split {
			set.Tracks = append(set.Tracks, t)
		}
	}
	b := builder{o: o, babble: babble, tracks: map[string][]float32{}}
	var load []Track
	for _, t := range set.Tracks {
		if o.Types == nil || slices.Contains(o.Types, t.Type) {
			load = append(load, t)
		}
	}
	if err := b.loadTracks(load); err != nil {
		return nil, err
	}
	// interleave speakers so neighbouring items differ
	rng := rand.New(rand.NewPCG(o.Seed, hash("order/"+o.Split)))
	rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })

	// one job per type, run on every core; clips keep the table order
	var sel []string
	for _, t := range Types() {
		// a music type with no track in the split is not the split's
		if !strings.HasPrefix(t, "music-") || slices.ContainsFunc(set.Tracks, func(tr Track) bool { return tr.Type == t }) {
			sel = append(sel, t)
		}
	}
	if o.Types != nil {
		for _, t := range o.Types {
			if !slices.Contains(sel, t) {
				return nil, fmt.Errorf("realset: type %q: not one of split %s's types %v", t, o.Split, sel)
			}
		}
		sel = o.Types
	}
	types := append([]string{"clean", "pause"}, sel...)
	clips := make([][]Clip, len(types))
	errs := make([]error, len(types))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, typ := range types {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			clips[i], errs[i] = b.typeClips(typ, items, pauses)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, c := range clips {
		set.Clips = append(set.Clips, c...)
	}
	return set, nil
}

// speakerItems loads a speaker's recordings and returns the speech items,
// the pause items and the recordings left over (for babble). Labels come
// from each whole recording before it is cut or trimmed.
func speakerItems(dir string, sp Speaker, info *SpeakerInfo, seed uint64) (items, pauses, rest []segment, err error) {
	var files []string
	for _, g := range sp.Files {
		m, err := filepath.Glob(filepath.Join(dir, g))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("realset: %s: %w", g, err)
		}
		slices.Sort(m)
		files = append(files, m...)
	}
	if len(files) == 0 {
		return nil, nil, nil, fmt.Errorf("realset: speaker %s: no files match %v in %s (run make vad-data)", sp.Name, sp.Files, dir)
	}
	// files in a seeded order, loaded until the items, the pause sentences
	// and enough recordings for babble are found
	rng := rand.New(rand.NewPCG(seed, hash("speaker/"+sp.Name)))
	rng.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
	for _, f := range files {
		if len(items) == sp.Items && info.PauseItems == sp.Pauses && len(rest) >= BabbleRecordings {
			break
		}
		rel, _ := filepath.Rel(dir, f)
		base := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		if sp.Prompts && ((!sp.ShortNames && strings.Count(base, "-") < 2) || strings.ContainsAny(base, "0123456789") ||
			strings.Contains(base, "tone") || strings.Contains(base, "beep")) {
			continue
		}
		r, err := load(dir, rel)
		if err != nil {
			return nil, nil, nil, err
		}
		info.Rate = r.Rate
		var cands []segment
		if sp.Prompts {
			if d := float64(len(r.Samples)) / Rate; d < 1.5 || d > 8 {
				continue
			}
			cands = append(cands, segment{name: sp.Name + "/" + lang(rel) + base, speaker: info, s: r.Samples, lab: Label(r.Samples)})
		} else {
			raw := rawSpeech(r.Samples)
			lab := bridge(slices.Clone(raw))
			for k, ph := range phrases(raw) {
				cands = append(cands, segment{name: fmt.Sprintf("%s/%s#%d", sp.Name, base, k+1), speaker: info,
					s: r.Samples[ph[0]*FrameLen : ph[1]*FrameLen], lab: lab[ph[0]:ph[1]]})
			}
			rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		}
		for _, c := range cands {
			if a, b := extent(c.lab); len(items) < sp.Items && a >= 0 && b-a >= 25 { // half a second of speech
				c.s, c.lab = trim(c.s, c.lab)
				scaleToActive(c.s, c.lab, SpeechLevelDB)
				items = append(items, c)
				info.ItemSecs += float64(len(c.s)) / Rate
				continue
			}
			if info.PauseItems < sp.Pauses {
				if ps, ok := pauseItems(c); ok {
					pauses = append(pauses, ps...)
					info.PauseItems++
					continue
				}
			}
			s := slices.Clone(c.s)
			scaleToActive(s, c.lab, SpeechLevelDB)
			rest = append(rest, segment{name: c.name, speaker: info, s: s, lab: c.lab})
		}
	}
	if len(items) < sp.Items {
		return nil, nil, nil, fmt.Errorf("realset: speaker %s: %d usable items, want %d", sp.Name, len(items), sp.Items)
	}
	if info.PauseItems < sp.Pauses {
		return nil, nil, nil, fmt.Errorf("realset: speaker %s: %d sentences with an inter-word gap for pause items, want %d", sp.Name, info.PauseItems, sp.Pauses)
	}
	var all []float32
	for _, it := range items {
		all = append(all, it.s...)
	}
	info.MedianF0 = MedianPitch(all)
	if info.Gender == "" {
		info.GenderBy = "pitch"
		info.Gender = "f"
		if info.MedianF0 < 160 {
			info.Gender = "m"
		}
	}
	return items, pauses, rest, nil
}

// lang returns "en/" etc. for an Asterisk prompt path.
func lang(rel string) string {
	d := filepath.Base(filepath.Dir(rel))
	if i := strings.IndexByte(d, '_'); i > 0 {
		return d[:i] + "/"
	}
	return ""
}

// phrases cuts a recording of several phrases at its pauses of 250 ms or
// more (raw labels), keeping 100 ms around each phrase; it returns frame
// ranges [start, end).
func phrases(raw []bool) [][2]int {
	var out [][2]int
	for _, r := range runs(raw, true) {
		a, b := max(0, r[0]-5), min(len(raw), r[1]+5)
		if n := len(out); n > 0 && r[0]-out[n-1][1]+5 < 13 {
			out[n-1][1] = b // a pause under 250 ms: the same phrase
			continue
		}
		out = append(out, [2]int{a, b})
	}
	return out
}

// trim keeps 200 ms before the first and after the last speech frame.
func trim(s []float32, lab []bool) ([]float32, []bool) {
	a, b := extent(lab)
	a, b = max(0, a-10), min(len(lab), b+10)
	return slices.Clone(s[a*FrameLen : b*FrameLen]), lab[a:b]
}

// scaleToActive scales s so that its speech frames (lab) have an RMS of
// level dBFS.
func scaleToActive(s []float32, lab []bool, level float64) {
	var e float64
	var n int
	for f, v := range lab {
		if v && (f+1)*FrameLen <= len(s) {
			e += frameEnergy(s[f*FrameLen : (f+1)*FrameLen])
			n++
		}
	}
	if n == 0 {
		return
	}
	g := float32(math.Pow(10, level/20) / math.Sqrt(e/float64(n)))
	for i := range s {
		s[i] *= g
	}
}

func rms(s []float32) float64 {
	var e float64
	for _, v := range s {
		e += float64(v) * float64(v)
	}
	return math.Sqrt(e / float64(max(1, len(s))))
}

// scaleRMS scales s to an RMS of level dBFS.
func scaleRMS(s []float32, level float64) {
	r := rms(s)
	if r == 0 {
		return
	}
	g := float32(math.Pow(10, level/20) / r)
	for i := range s {
		s[i] *= g
	}
}

func toInt16(s []float32) []int16 {
	out := make([]int16, len(s))
	for i, v := range s {
		out[i] = pcm.Clamp16(v * 32768)
	}
	return out
}

func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// builder makes clips of one split.
type builder struct {
	o      Options
	babble [][][]float32        // per speaker, their recordings
	tracks map[string][]float32 // loaded music, by file
}

// typeClips builds a type's clips: the speech clip at each SNR (one stretch
// of noise, scaled) followed by its noise-alone clips; for clean and pause
// the one speech clip.
func (b *builder) typeClips(typ string, items, pauses []segment) ([]Clip, error) {
	switch typ {
	case "clean":
		c, err := b.speechClip(typ, 0, items, nil)
		return []Clip{c}, err
	case "pause":
		c, err := b.speechClip(typ, 0, pauses, nil)
		return []Clip{c}, err
	}
	n := clipLen(items)
	bed, src, err := b.noise(typ, n, "speech", 0)
	if err != nil {
		return nil, err
	}
	var out []Clip
	for _, snr := range SNRs() {
		c, err := b.speechClip(typ, snr, items, bed)
		if err != nil {
			return nil, err
		}
		c.Sources = src
		out = append(out, c)
		alone, err := b.noiseAlone(typ, snr)
		if err != nil {
			return nil, err
		}
		out = append(out, alone...)
	}
	return out, nil
}

// clipLen is the length of a speech clip of items.
func clipLen(items []segment) int {
	n := Lead
	for _, it := range items {
		n += len(it.s) + Gap
		n += FrameLen - n%FrameLen
	}
	return n
}

// loadTracks decodes the tracks, on every core.
func (b *builder) loadTracks(tracks []Track) error {
	recs := make([]Recording, len(tracks))
	errs := make([]error, len(tracks))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, t := range tracks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			recs[i], errs[i] = load(b.o.Dir, t.File)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, t := range tracks {
		if len(recs[i].Samples) < Rate {
			return fmt.Errorf("realset: track %s: %d samples", t.Name, len(recs[i].Samples))
		}
		b.tracks[t.File] = recs[i].Samples
	}
	return nil
}

// speechClip lays the items out one after another (Lead, then each item and
// Gap) over noise (nil: none) scaled to snr.
func (b *builder) speechClip(typ string, snr float64, items []segment, noise []float32) (Clip, error) {
	n := clipLen(items)
	mix := make([]float32, n)
	c := Clip{Type: typ, SNR: snr, Speech: make([]bool, n/FrameLen)}
	pos := Lead
	for _, it := range items {
		copy(mix[pos:], it.s)
		f0 := pos / FrameLen
		for f, v := range it.lab {
			c.Speech[f0+f] = v
		}
		a, e := extent(it.lab)
		item := Item{Name: it.name, Speaker: it.speaker.Name, Gender: it.speaker.Gender, Rate: it.speaker.Rate,
			Start: (f0 + a) * FrameLen, End: (f0 + e) * FrameLen, Pause: it.pause, Inserted: it.inserted}
		if it.pause > 0 {
			item.PauseAt = pos + it.pauseAt
		}
		c.Items = append(c.Items, item)
		pos += len(it.s) + Gap
		pos += FrameLen - pos%FrameLen
	}
	if noise != nil {
		g := float32(math.Pow(10, (SpeechLevelDB-snr)/20) / rms(noise))
		for i := range mix {
			mix[i] += g * noise[i]
		}
	}
	c.Samples = toInt16(mix)
	return c, nil
}

// noiseAlone returns the noise-alone clips of typ at snr: one of
// NoiseSeconds, or for music one per track of the split, together at least
// MusicAloneSeconds.
func (b *builder) noiseAlone(typ string, snr float64) ([]Clip, error) {
	count, secs := 1, b.o.NoiseSeconds
	if strings.HasPrefix(typ, "music-") {
		count = len(b.typeTracks(typ))
		secs = max(secs, (MusicAloneSeconds+count-1)/count)
	}
	var out []Clip
	for k := range count {
		n := secs * Rate
		noise, src, err := b.noise(typ, n, fmt.Sprintf("alone/%g", snr), k)
		if err != nil {
			return nil, err
		}
		scaleRMS(noise, SpeechLevelDB-snr)
		out = append(out, Clip{Type: typ, SNR: snr, Sources: src, Speech: make([]bool, n/FrameLen), Samples: toInt16(noise)})
	}
	return out, nil
}

func (b *builder) typeTracks(typ string) []Track {
	var out []Track
	for _, t := range Tracks() {
		if t.Split == b.o.Split && t.Type == typ {
			out = append(out, t)
		}
	}
	return out
}

// noise returns n samples of typ (any level), deterministically from the
// seed, the type, the role and k (which track starts, for music), and the
// sources used.
func (b *builder) noise(typ string, n int, role string, k int) ([]float32, []string, error) {
	rng := rand.New(rand.NewPCG(b.o.Seed, hash(b.o.Split+"/"+typ+"/"+role)))
	switch typ {
	case "white", "pink", "brown":
		s, err := noisyset.Noise(typ, n, rng, nil)
		return s, []string{"synthetic " + typ + " noise"}, err
	case "hum50":
		return hum(n, 50, rng), []string{"synthetic 50 Hz mains hum"}, nil
	case "hum60":
		return hum(n, 60, rng), []string{"synthetic 60 Hz mains hum"}, nil
	case "keyboard":
		return keyboard(b.o.Dir, n, rng)
	case "babble":
		return babble(b.babble, n, rng), []string{"babble"}, nil
	}
	tracks := b.typeTracks(typ)
	if len(tracks) == 0 {
		return nil, nil, fmt.Errorf("realset: no %s tracks in split %s", typ, b.o.Split)
	}
	if role != "speech" {
		// a noise-alone clip: one track
		tracks = tracks[k%len(tracks) : k%len(tracks)+1]
	}
	return b.music(tracks, n, rng)
}

// newRand is the package's random source for a seed and a purpose.
func newRand(seed uint64, what string) *rand.Rand { return rand.New(rand.NewPCG(seed, hash(what))) }
