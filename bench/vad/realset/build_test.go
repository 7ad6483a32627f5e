package realset

import (
	"github.com/banterbot/banter/audio/pcm"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// dataDir returns the vad data directory ($VADDATA or make vad-data's
// default), skipping the test when it is not installed unless
// BANTER_REQUIRE_VADDATA=1.
func dataDir(t *testing.T) string {
	t.Helper()
	dir := DefaultDir()
	if err := Check(dir); err != nil {
		if os.Getenv("BANTER_REQUIRE_VADDATA") == "1" {
			t.Fatalf("BANTER_REQUIRE_VADDATA=1: %v", err)
		}
		t.Skipf("%v (make vad-data installs it; set VADDATA for another directory)", err)
	}
	return dir
}

// TestCatalogue checks the splits' disjointness and coverage without data.
func TestCatalogue(t *testing.T) {
	speakerSplit := map[string]string{}
	count := map[string]int{}
	for _, sp := range Speakers() {
		if _, dup := speakerSplit[sp.Name]; dup {
			t.Errorf("speaker %s listed twice", sp.Name)
		}
		speakerSplit[sp.Name] = sp.Split
		count[sp.Split]++
		if !slices.Contains(Splits(), sp.Split) {
			t.Errorf("speaker %s: split %q", sp.Name, sp.Split)
		}
	}
	for _, split := range Splits() {
		if count[split] < 6 {
			t.Errorf("split %s: %d speakers, want at least 6", split, count[split])
		}
		// the babble of a split is another split's speakers
		if b := BabbleSplit(split); b == split || count[b] < 4 {
			t.Errorf("split %s: babble from split %s (%d speakers), want another split with at least 4", split, b, count[b])
		}
	}
	trackSplit := map[string]string{}
	perType := map[string]map[string]int{}
	for _, tr := range Tracks() {
		if s, dup := trackSplit[tr.File]; dup {
			t.Errorf("track %s in %s and %s", tr.File, s, tr.Split)
		}
		trackSplit[tr.File] = tr.Split
		if !slices.Contains(Types(), tr.Type) {
			t.Errorf("track %s: type %q not in Types", tr.Name, tr.Type)
		}
		if perType[tr.Type] == nil {
			perType[tr.Type] = map[string]int{}
		}
		perType[tr.Type][tr.Split]++
	}
	// the five music types of test and dev are in both; fresh has four of its own
	// (music-melodic among them, its most periodic tracks)
	types := map[string]int{}
	for typ, m := range perType {
		for split, n := range m {
			types[split]++
			if n < 2 {
				t.Errorf("%s: %d track in split %s, want 2 or more", typ, n, split)
			}
		}
		if (m["test"] == 0) != (m["dev"] == 0) {
			t.Errorf("%s: tracks in test %d, dev %d: want both or neither", typ, m["test"], m["dev"])
		}
	}
	for _, split := range Splits() {
		if types[split] < 4 {
			t.Errorf("split %s: %d music types, want at least 4", split, types[split])
		}
	}
}

func clipsHash(set *Set) uint64 {
	h := fnv.New64a()
	var b []byte
	for _, c := range set.Clips {
		b = b[:0]
		for _, v := range c.Samples {
			b = append(b, byte(v), byte(v>>8))
		}
		for _, v := range c.Speech {
			if v {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
		h.Write(b)
	}
	return h.Sum64()
}

// TestBuild builds part of the test split twice (same seed: the same
// samples and labels) and checks its invariants: speakers of both genders,
// every catalogue file present, items labelled, pause items with their
// pause where it was put, noise at the level its SNR asks, babble from the
// other split only.
func TestBuild(t *testing.T) {
	dir := dataDir(t)
	for _, sp := range Speakers() {
		for _, g := range sp.Files {
			if m, _ := filepath.Glob(filepath.Join(dir, g)); len(m) == 0 {
				t.Errorf("speaker %s: no file matches %s", sp.Name, g)
			}
		}
	}
	for _, tr := range Tracks() {
		if _, err := os.Stat(filepath.Join(dir, tr.File)); err != nil {
			t.Errorf("track %s: %v", tr.Name, err)
		}
	}
	o := Options{Dir: dir, Split: "test", Seed: 7, Types: []string{MusicFolk, "keyboard", "babble", "hum50"}}
	set, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	// again, with fewer types: the clips both builds make are the same
	o2 := o
	o2.Types = []string{"hum50"}
	again, err := Build(o2)
	if err != nil {
		t.Fatal(err)
	}
	var common Set
	for _, c := range set.Clips {
		if c.Type == "clean" || c.Type == "pause" || c.Type == "hum50" {
			common.Clips = append(common.Clips, c)
		}
	}
	if a, b := clipsHash(&common), clipsHash(again); a != b || len(common.Clips) != len(again.Clips) {
		t.Errorf("two builds with seed 7 differ: %016x, %016x", a, b)
	}
	// another seed, other clips
	o3 := o2
	o3.Seed = 8
	other, err := Build(o3)
	if err != nil {
		t.Fatal(err)
	}
	if clipsHash(other) == clipsHash(again) {
		t.Error("seeds 7 and 8 give the same clips")
	}

	genders := map[string]int{}
	own := map[string]bool{}
	for _, sp := range set.Speakers {
		genders[sp.Gender]++
		own[sp.Name] = true
		if sp.Split != "test" {
			t.Errorf("speaker %s of split %s in the test set", sp.Name, sp.Split)
		}
	}
	if len(set.Speakers) < 6 || genders["f"] == 0 || genders["m"] == 0 {
		t.Errorf("speakers %d, by gender %v: want 6 or more, men and women", len(set.Speakers), genders)
	}
	if len(set.Babble) < 4 {
		t.Errorf("%d babble speakers, want at least 4", len(set.Babble))
	}
	for _, b := range set.Babble {
		if own[b] {
			t.Errorf("babble speaker %s talks in the test split", b)
		}
	}

	want := len(o.Types)*len(SNRs()) + 2
	var speechClips int
	for _, c := range set.Clips {
		if len(c.Items) > 0 {
			speechClips++
		}
		if len(c.Speech) != len(c.Samples)/FrameLen {
			t.Errorf("%s %g: %d labels for %d frames", c.Type, c.SNR, len(c.Speech), len(c.Samples)/FrameLen)
		}
		for _, it := range c.Items {
			n, sp := 0, 0
			for f := it.Start / FrameLen; f < it.End/FrameLen; f++ {
				n++
				if c.Speech[f] {
					sp++
				}
			}
			if n < 25 || float64(sp) < 0.5*float64(n) {
				t.Errorf("%s %s: %d of %d frames speech", c.Type, it.Name, sp, n)
			}
			if c.Type == "pause" {
				if it.Pause <= 0 || it.PauseAt <= it.Start || it.PauseAt >= it.End {
					t.Errorf("pause item %s: pause %v at %d outside %d-%d", it.Name, it.Pause, it.PauseAt, it.Start, it.End)
				}
				// the inserted silence is silent and labelled so
				end := (it.PauseAt + int(it.Inserted*Rate/time.Second)) / FrameLen
				for f := it.PauseAt/FrameLen + 1; f < end-1; f++ {
					if c.Speech[f] || c.Samples[f*FrameLen+FrameLen/2] != 0 {
						t.Fatalf("pause item %s: frame %d in the pause is speech or not silent", it.Name, f)
					}
				}
				// and the stretch without speech labels is the pause at most (the labels
				// bridge short gaps: the speaker's own gap may be labelled speech)
				a, b := it.PauseAt/FrameLen, it.PauseAt/FrameLen
				for a > 0 && !c.Speech[a-1] {
					a--
				}
				for b < len(c.Speech) && !c.Speech[b] {
					b++
				}
				if got := time.Duration(b-a) * pcm.FrameDuration; got < it.Inserted-pcm.FrameDuration || got > it.Pause {
					t.Errorf("pause item %s: %v without speech, want %v to %v", it.Name, got, it.Inserted, it.Pause)
				}
			}
		}
		if len(c.Items) == 0 {
			var e float64
			for _, v := range c.Samples {
				e += float64(v) * float64(v)
			}
			level := 10*math.Log10(e/float64(len(c.Samples))) - 20*math.Log10(32768)
			if want := SpeechLevelDB - c.SNR; math.Abs(level-want) > 0.1 {
				t.Errorf("%s alone at %g dB: level %.2f dBFS, want %.1f", c.Type, c.SNR, level, want)
			}
		}
	}
	if speechClips != want {
		t.Errorf("%d speech clips, want %d", speechClips, want)
	}
	var pauseItems int
	for _, c := range set.Clips {
		if c.Type == "pause" {
			pauseItems = len(c.Items)
		}
	}
	var sentences int
	for _, sp := range set.Speakers {
		sentences += sp.Pauses
	}
	if pauseItems != sentences*len(Pauses()) {
		t.Errorf("%d pause items, want %d", pauseItems, sentences*len(Pauses()))
	}
}

// TestBuildFresh builds the fresh split's clean and pause clips: its own speakers, men and
// women, babble from dev's, and each of its four music types in its tracks.
func TestBuildFresh(t *testing.T) {
	dir := dataDir(t)
	set, err := Build(Options{Dir: dir, Split: "fresh", Seed: 7, Types: []string{"hum50"}})
	if err != nil {
		t.Fatal(err)
	}
	genders := map[string]int{}
	for _, sp := range set.Speakers {
		genders[sp.Gender]++
		if sp.Split != "fresh" {
			t.Errorf("speaker %s of split %s in the fresh set", sp.Name, sp.Split)
		}
	}
	if len(set.Speakers) < 6 || genders["f"] == 0 || genders["m"] == 0 {
		t.Errorf("speakers %d, by gender %v: want 6 or more, men and women", len(set.Speakers), genders)
	}
	dev := map[string]bool{}
	for _, sp := range Speakers() {
		dev[sp.Name] = sp.Split == "dev"
	}
	for _, b := range set.Babble {
		if !dev[b] {
			t.Errorf("babble speaker %s is not dev's", b)
		}
	}
	types := map[string]bool{}
	for _, tr := range set.Tracks {
		types[tr.Type] = true
	}
	for _, typ := range []string{MusicMelodic, MusicWesnoth, MusicFreedroid, MusicColobot} {
		if !types[typ] {
			t.Errorf("no %s track in the fresh split", typ)
		}
	}
}
