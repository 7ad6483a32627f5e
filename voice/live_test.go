package voice_test

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/banterbot/banter/sim/discord/voicesim"
)

// trimSpeech cuts 48 kHz stereo audio to its voiced part: from the first to the last 10 ms
// window above -45 dBFS (the fixtures' padding and trailing silence go).
func trimSpeech(s []int16) []int16 {
	const win = 480 * 2 // 10 ms of 48 kHz stereo
	loud := func(w []int16) bool {
		var sum float64
		for _, v := range w {
			sum += float64(v) * float64(v)
		}
		return 20*math.Log10(math.Sqrt(sum/float64(len(w)))/32768+1e-12) > -45
	}
	first, last := -1, -1
	for off := 0; off+win <= len(s); off += win {
		if loud(s[off : off+win]) {
			if first < 0 {
				first = off
			}
			last = off + win
		}
	}
	if first < 0 {
		return nil
	}
	return s[first:last]
}

// talk is an utterance a member says live: voiced parts (48 kHz stereo, trimmed) with the
// silences between them.
type talk struct {
	parts  [][]int16
	pauses []time.Duration
	// hold, when set, draws pause i out past its length until hold(i) reports true (looked at
	// every frame), for at most maxHold: the pause waits for the bot to have done something.
	hold    func(i int) bool
	maxHold time.Duration
}

// duration is the talk's audio length (held pauses at their minimum).
func (t talk) duration() time.Duration {
	var d time.Duration
	for _, p := range t.parts {
		d += time.Duration(len(p)/2) * time.Second / 48000
	}
	for _, p := range t.pauses {
		d += p
	}
	return d
}

// say sends the talk from m as a live client does: speaking on, one Opus frame every 20 ms
// (silent frames in the pauses), five silence frames, speaking off. It returns the time the
// frame holding the last speech sample went out: the end of voice on the audio timeline.
func say(ctx context.Context, m *voicesim.Member, t talk) (time.Time, error) {
	quiet, err := voicesim.EncodePCM(make([]int16, 1920))
	if err != nil {
		return time.Time{}, err
	}
	m.SetSpeaking(true)
	defer m.SetSpeaking(false)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	first := true
	send := func(f []byte) error {
		if !first {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
		}
		first = false
		return m.SendOpus(f)
	}
	var last time.Time
	for i, part := range t.parts {
		frames, err := voicesim.EncodePCM(part)
		if err != nil {
			return time.Time{}, err
		}
		for _, f := range frames {
			if err := send(f); err != nil {
				return time.Time{}, fmt.Errorf("say part %d: %w", i, err)
			}
		}
		last = time.Now()
		if i == len(t.parts)-1 {
			break
		}
		n := int(t.pauses[i] / (20 * time.Millisecond))
		maxN := n + int(t.maxHold/(20*time.Millisecond))
		for k := 0; k < n || (t.hold != nil && k < maxN && !t.hold(i)); k++ {
			if err := send(quiet[0]); err != nil {
				return time.Time{}, fmt.Errorf("say pause %d: %w", i, err)
			}
		}
	}
	for range 5 {
		if err := send(voicesim.SilenceFrame()); err != nil {
			return time.Time{}, err
		}
	}
	return last, nil
}
