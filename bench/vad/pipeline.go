package main

import (
	"fmt"
	"github.com/banterbot/banter/config"
	"io"
	"slices"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/jitter"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/bench/vad/noisyset"
)

// bargeMin is voice.bargeIn.minSpeechMs's default.
var bargeMin = time.Duration(config.Default().Voice.BargeIn.MinSpeechMs) * time.Millisecond

// encode turns 16 kHz mono into the Opus packets a Discord client sends.
func encode(s []int16) ([][]byte, error) {
	rs, err := resample.New(pcm.Speech16k(), pcm.Discord())
	if err != nil {
		return nil, err
	}
	enc, err := opus.NewEncoder(opus.EncoderConfig{Application: opus.ApplicationVoIP, Bitrate: 64000})
	if err != nil {
		return nil, err
	}
	fl := pcm.Speech16k().FrameLen()
	up := make([]int16, rs.MaxOut(fl))
	acc := make([]int16, 0, 4*pcm.Discord().FrameLen())
	var out [][]byte
	buf := make([]byte, 4000)
	for i := 0; i+fl <= len(s); i += fl {
		n, err := rs.Process(up, s[i:i+fl])
		if err != nil {
			return nil, err
		}
		acc = append(acc, up[:n]...)
		for len(acc) >= pcm.Discord().FrameLen() {
			m, err := enc.Encode(acc[:pcm.Discord().FrameLen()], buf)
			if err != nil {
				return nil, fmt.Errorf("vad: encode: %w", err)
			}
			out = append(out, slices.Clone(buf[:m]))
			acc = acc[:copy(acc, acc[pcm.Discord().FrameLen():])]
		}
	}
	return out, nil
}

// heard is what one Listener reported over a clip.
type heard struct {
	events []vad.Event // Audio replaced by its length in AudioLen
	lens   []int
	barge  []time.Duration // positions where an utterance's speech reached bargeMin
}

// listenerConfig is banter's default endpointing (config.Default's voice.endpointing, as
// voice/hearing.go listenerConfig maps it).
func listenerConfig(alg vad.Algorithm) audio.ListenerConfig {
	e := config.Default().Voice.Endpointing
	v := vad.DefaultConfig()
	v.Algorithm = alg
	v.EndSilence = time.Duration(e.SilenceMs) * time.Millisecond
	v.MinUtterance = time.Duration(e.MinUtteranceMs) * time.Millisecond
	v.MaxUtterance = time.Duration(e.MaxUtteranceMs) * time.Millisecond
	return audio.ListenerConfig{Format: pcm.Speech16k(), VAD: v, DirectDecode: true}
}

func listen(pkts [][]byte, alg vad.Algorithm) (heard, error) {
	var h heard
	l, err := audio.NewListener(listenerConfig(alg), func(ev vad.Event) {
		h.lens = append(h.lens, len(ev.Audio))
		ev.Audio = nil
		h.events = append(h.events, ev)
	}, nil)
	if err != nil {
		return h, err
	}
	barged := false // this utterance has interrupted the bot (once: the bot stops)
	for i, p := range pkts {
		l.Push(jitter.Packet{SSRC: 1, Seq: uint16(i), Timestamp: uint32(i * opus.FrameSamples), Payload: p})
		l.Tick()
		// voice/hearing.go checkBargeIn with the bot talking throughout:
		// the energy detector's raw speech count, or confirmed speech.
		confirmed := alg == vad.AlgorithmEnergy || l.Speaking()
		if !barged && confirmed && l.Speech() >= bargeMin && l.Active() {
			barged = true
			h.barge = append(h.barge, l.Position())
		}
		if !l.Active() {
			barged = false
		}
	}
	l.Flush()
	return h, nil
}

// result is one clip's score for one detector.
type result struct {
	minutes  float64
	phantoms int // EventEnd on a noise-only clip
	barge    int // barge-in triggers
	bargeOK  int // speech items during which barge-in triggered
	speechN  int // truth speech frames
	missedN  int
	eos      []time.Duration // per item: decision time after the speech stops
	noEnd    int             // items whose utterance did not end before the next one
	items    int             // speech items
	perItem  []string        // item: missed frames/speech frames, for -v
}

func score(c noisyset.Clip, h heard) result {
	r := result{minutes: float64(len(c.Samples)) / noisyset.Rate / 60, barge: len(h.barge)}
	if len(c.Items) == 0 {
		for _, ev := range h.events {
			if ev.Kind == vad.EventEnd {
				r.phantoms++
			}
		}
		return r
	}
	r.items = len(c.Items)
	covered := make([]bool, len(c.Speech))
	fd := pcm.FrameDuration
	for i, ev := range h.events {
		if ev.Kind != vad.EventEnd {
			continue
		}
		from := int(ev.AudioStart / fd)
		to := from + h.lens[i]/noisyset.FrameLen
		for f := max(0, from); f < min(to, len(covered)); f++ {
			covered[f] = true
		}
	}
	for f, sp := range c.Speech {
		if sp {
			r.speechN++
			if !covered[f] {
				r.missedN++
			}
		}
	}
	for _, it := range c.Items {
		n, m := 0, 0
		for f := it.Start / noisyset.FrameLen; f < it.End/noisyset.FrameLen; f++ {
			if c.Speech[f] {
				n++
				if !covered[f] {
					m++
				}
			}
		}
		r.perItem = append(r.perItem, fmt.Sprintf("%s:%d/%d", it.Name, m, n))
	}
	fd0 := pcm.FrameDuration
	for _, it := range c.Items {
		from := time.Duration(it.Start/noisyset.FrameLen) * fd0
		to := time.Duration(it.End/noisyset.FrameLen)*fd0 + time.Second
		for _, at := range h.barge {
			if at >= from && at <= to {
				r.bargeOK++
				break
			}
		}
	}
	for k, it := range c.Items {
		end := time.Duration(it.End/noisyset.FrameLen) * fd
		limit := time.Duration(1<<62 - 1)
		if k+1 < len(c.Items) {
			limit = time.Duration(c.Items[k+1].Start/noisyset.FrameLen) * fd
		}
		found := false
		for _, ev := range h.events {
			if (ev.Kind == vad.EventEnd || ev.Kind == vad.EventDiscard) && ev.Final && ev.At > end && ev.At <= limit {
				r.eos = append(r.eos, ev.At-end)
				found = true
				break
			}
		}
		if !found {
			r.noEnd++
		}
	}
	return r
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return -1
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// merge pools b into a (the same clip kind from another seed).
func (a *result) merge(b result) {
	a.minutes += b.minutes
	a.phantoms += b.phantoms
	a.barge += b.barge
	a.bargeOK += b.bargeOK
	a.speechN += b.speechN
	a.missedN += b.missedN
	a.eos = append(a.eos, b.eos...)
	a.noEnd += b.noEnd
	a.items += b.items
}

// row is one line of the table: a noise at one SNR, its speech clips and
// noise-only clips pooled over the seeds.
type row struct {
	noise    string
	snr      float64
	sp, only [2]result
	hasOnly  bool
}

func rows(jobs []*job) []*row {
	return groupRows(jobs, func(j *job) string { return fmt.Sprintf("%s/%g", j.clip.Noise, j.clip.SNR) },
		func(j *job) *row { return &row{noise: j.clip.Noise, snr: j.clip.SNR} },
		func(r *row, j *job) {
			for d := range 2 {
				if len(j.clip.Items) > 0 {
					r.sp[d].merge(j.res[d])
				} else {
					r.hasOnly = true
					r.only[d].merge(j.res[d])
				}
			}
		})
}

// groupRows pools jobs into rows by key (a type at one SNR), the rows in the order their first
// job comes: newRow starts a row, add pools a job into it.
func groupRows[J, R any](jobs []J, key func(J) string, newRow func(J) *R, add func(*R, J)) []*R {
	var out []*R
	byKey := map[string]*R{}
	for _, j := range jobs {
		k := key(j)
		r := byKey[k]
		if r == nil {
			r = newRow(j)
			byKey[k] = r
			out = append(out, r)
		}
		add(r, j)
	}
	return out
}

func printTable(w io.Writer, jobs []*job) {
	fmt.Fprintln(w, "noise     SNR | phantom/min   | missed %      | end of speech ms | no end | barge-in false/min | items barged in")
	fmt.Fprintln(w, "              | speech neural | speech neural | speech neural    | sp ne  | speech neural      | sp  ne")
	var phantomMax, bargeMax, missedPink5 float64
	var eosKeyboard []time.Duration
	for _, rw := range rows(jobs) {
		label := fmt.Sprintf("%-8s %3.0f", rw.noise, rw.snr)
		if rw.noise == "clean" {
			label = "clean       "
		}
		ph, bg := [2]string{"-", "-"}, [2]string{"-", "-"}
		var ms, eos [2]string
		var ne [2]int
		for d := range 2 {
			s := rw.sp[d]
			missed := 100 * float64(s.missedN) / float64(max(1, s.speechN))
			ms[d] = fmt.Sprintf("%.1f", missed)
			eos[d] = fmt.Sprint(median(s.eos).Milliseconds())
			ne[d] = s.noEnd
			if rw.hasOnly {
				o := rw.only[d]
				p := float64(o.phantoms) / o.minutes
				b := float64(o.barge) / o.minutes
				ph[d] = fmt.Sprintf("%.1f", p)
				bg[d] = fmt.Sprintf("%.1f", b)
				if d == 1 {
					if rw.noise != "babble" {
						phantomMax = max(phantomMax, p)
					}
					bargeMax = max(bargeMax, b)
				}
			}
			if d == 1 && rw.noise == "pink" && rw.snr == 5 {
				missedPink5 = missed
			}
			if d == 1 && rw.noise == "keyboard" {
				eosKeyboard = append(eosKeyboard, s.eos...)
			}
		}
		fmt.Fprintf(w, "%s | %6s %6s | %6s %6s | %6s %6s    | %2d %2d  | %6s %6s      | %3d %3d /%d\n",
			label, ph[0], ph[1], ms[0], ms[1], eos[0], eos[1], ne[0], ne[1], bg[0], bg[1],
			rw.sp[0].bargeOK, rw.sp[1].bargeOK, rw.sp[1].items)
	}
	fmt.Fprintln(w, "set synthetic: espeak-ng speech (audio/testdata/speech), synthetic noise (bench/vad/noisyset)")
	fmt.Fprintf(w, "vad: set=synthetic phantom_per_min_max=%.1f missed_pct_pink5=%.1f eos_median_keyboard_ms=%d bargein_false_per_min=%.1f\n",
		phantomMax, missedPink5, median(eosKeyboard).Milliseconds(), bargeMax)
}
