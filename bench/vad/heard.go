package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/jitter"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/bench/vad/realset"
)

// runPauses measures how banter hears the pauses of the split's pause items (sentences with a
// pause of 300–800 ms inserted at a real inter-word gap): per item, the pause heard (the
// longest silence the Listener counted inside the sentence, the end silence set out of reach),
// and, for each end silence from 600 to 1,000 ms, how many sentences with a 400–700 ms pause
// it would split. The end silence to ship is one the split leaves whole with a margin.
func runPauses(w io.Writer, o realOptions) error {
	set, err := speechSet(o)
	if err != nil {
		return err
	}
	type item struct {
		name         string
		pause, heard time.Duration
	}
	var items []item
	ends := []time.Duration{}
	for e := 600 * time.Millisecond; e <= time.Second; e += 20 * time.Millisecond {
		ends = append(ends, e)
	}
	splits := make([]int, len(ends))
	counted := 0
	for _, c := range set.Clips {
		if c.Type != "pause" {
			continue
		}
		pkts, err := encode(c.Samples)
		if err != nil {
			return err
		}
		sil, _, err := listenAt(pkts, 3*time.Second)
		if err != nil {
			return err
		}
		for _, it := range c.Items {
			// the silence counted inside the sentence: from its first frame heard as speech
			a, b := it.Start/realset.FrameLen, min(it.End/realset.FrameLen+1, len(sil))
			for a < b && sil[a] > 0 {
				a++
			}
			items = append(items, item{it.Name, it.Pause, slices.Max(sil[a:b])})
		}
		for k, e := range ends {
			_, events, err := listenAt(pkts, e)
			if err != nil {
				return err
			}
			for _, it := range c.Items {
				if it.Pause < 400*time.Millisecond || it.Pause > 700*time.Millisecond {
					continue
				}
				if k == 0 {
					counted++
				}
				from, to := time.Duration(it.Start/realset.FrameLen)*pcm.FrameDuration, time.Duration(it.End/realset.FrameLen)*pcm.FrameDuration
				n := 0
				for _, ev := range events {
					if ev.Kind == vad.EventEnd && ev.Final && ev.SpeechEnd > from && ev.SpeechStart < to {
						n++
					}
				}
				if n > 1 {
					splits[k]++
				}
			}
		}
	}
	slices.SortFunc(items, func(a, b item) int { return int((b.heard - b.pause) - (a.heard - a.pause)) })
	fmt.Fprintf(w, "pauses heard, split %s (%d items; the pause is the whole stretch without speech, the speaker's gap included):\n", set.Split, len(items))
	for _, it := range items {
		fmt.Fprintf(w, "  %-60s pause %4d ms  heard %4d ms  %+5d ms\n", it.name, it.pause.Milliseconds(), it.heard.Milliseconds(), (it.heard - it.pause).Milliseconds())
	}
	for k, e := range ends {
		fmt.Fprintf(w, "end silence %4d ms: %d of %d sentences with a 400-700 ms pause split\n", e.Milliseconds(), splits[k], counted)
	}
	return nil
}

// speechSet builds the split's clean and pause clips (and, as Build always makes a noise
// type, one second of hum), for the modes that look at speech alone.
func speechSet(o realOptions) (*realset.Set, error) {
	if err := realset.Check(o.data); err != nil {
		return nil, err
	}
	return realset.Build(realset.Options{Dir: o.data, Split: o.split, Seed: o.seed, NoiseSeconds: 1, Types: []string{"hum50"}})
}

// listenAt plays the packets into a Listener with banter's default endpointing and the end
// silence e, and returns the silence it counted after each packet and its final events.
func listenAt(pkts [][]byte, e time.Duration) ([]time.Duration, []vad.Event, error) {
	cfg := listenerConfig(vad.DefaultConfig().Algorithm)
	cfg.VAD.EndSilence = e
	var events []vad.Event
	l, err := audio.NewListener(cfg, func(ev vad.Event) {
		ev.Audio = nil
		events = append(events, ev)
	}, nil)
	if err != nil {
		return nil, nil, err
	}
	sil := make([]time.Duration, 0, len(pkts))
	for i, p := range pkts {
		l.Push(jitter.Packet{SSRC: 1, Seq: uint16(i), Timestamp: uint32(i * opus.FrameSamples), Payload: p})
		l.Tick()
		sil = append(sil, l.Silence())
	}
	l.Flush()
	return sil, events, nil
}
