package audio_test

import (
	"fmt"
	"os"
	"time"

	"github.com/banterbot/banter/audio"
	"github.com/banterbot/banter/audio/jitter"
	"github.com/banterbot/banter/audio/opus"
	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/audio/wav"
)

// A reply's PCM (here one second of 24 kHz silence, as a TTS body would
// arrive in arbitrary chunks) becomes 20 ms Opus frames for the sender.
func ExampleTalker() {
	t, err := audio.NewTalker(pcm.Mono24k(), opus.EncoderConfig{}, nil)
	if err != nil {
		panic(err)
	}
	frames := 0
	send := func(packet []byte) error { frames++; return nil } // e.g. conn.SendOpus(ctx, packet)
	body := pcm.AppendBytes(nil, make([]int16, 24000))
	for len(body) > 0 {
		n := min(len(body), 999)
		if err := t.WriteBytes(body[:n], send); err != nil {
			panic(err)
		}
		body = body[n:]
	}
	if err := t.Flush(send); err != nil {
		panic(err)
	}
	fmt.Println(frames, "frames,", time.Duration(t.Frames())*pcm.FrameDuration)
	// Output: 50 frames, 1s
}

// One speaker's packets become an utterance whose audio is uploaded to
// speech-to-text as a WAV built in memory. The packets here are made from
// a speech fixture by a Talker, as the member's client would send them.
func ExampleListener() {
	b, err := os.ReadFile("testdata/speech/hey-banter-weather.wav")
	if err != nil {
		panic(err)
	}
	speech, format, err := wav.Decode(nil, b)
	if err != nil {
		panic(err)
	}

	var upload []byte
	l, err := audio.NewListener(audio.ListenerConfig{DirectDecode: true}, func(ev vad.Event) {
		fmt.Println(ev.Kind, ev.SpeechStart, ev.Chunk)
		if ev.Kind == vad.EventEnd && ev.Final {
			upload = wav.Append(upload[:0], pcm.Speech16k(), ev.Audio) // copy: Audio is borrowed
		}
	}, nil)
	if err != nil {
		panic(err)
	}

	member, _ := audio.NewTalker(format, opus.EncoderConfig{Application: opus.ApplicationVoIP}, nil)
	var seq uint16
	send := func(packet []byte) error {
		l.Push(jitter.Packet{SSRC: 1, Seq: seq, Timestamp: uint32(seq) * opus.FrameSamples, Payload: packet})
		l.Tick() // the session ticks every 20 ms
		seq++
		return nil
	}
	if err := member.Write(speech, send); err != nil {
		panic(err)
	}
	for range 50 { // the member stops sending; the session keeps ticking
		l.Tick()
	}

	h, _ := wav.ParseHeader(upload)
	fmt.Printf("%v, %.1f s\n", h.Format, h.Format.Duration(h.Samples()).Seconds())
	// Output:
	// start 300ms 0
	// speaking 300ms 0
	// end 300ms 0
	// 16000Hz/1ch, 2.8 s
}
