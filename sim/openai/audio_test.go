package openaisim

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func TestTranscription(t *testing.T) {
	short := EncodeWAV(make([]byte, 2*SpeechRate/2), SpeechRate) // 0.5 s of silence
	long := EncodeWAV(Synthesize("this is a much longer utterance for the test", "alloy", 1), SpeechRate)
	rules := []Rule{
		{Name: "short", Match: Match{Endpoint: EndpointTranscriptions, MaxAudio: time.Second}, Reply: Reply{Transcript: "uh"}},
		{Name: "long", Match: Match{Endpoint: EndpointTranscriptions, MinAudio: 2 * time.Second}, Reply: Reply{Transcript: "banter, what's up?", Language: "english"}},
	}
	tests := []struct {
		name     string
		file     []byte
		filename string
		format   openai.AudioResponseFormat
		want     string
		wantDur  time.Duration
	}{
		{name: "short wav by duration", file: short, filename: "a.wav", want: "uh", wantDur: 500 * time.Millisecond},
		{name: "long wav by duration", file: long, filename: "b.wav", want: "banter, what's up?", wantDur: SpeechDuration("this is a much longer utterance for the test", 1)},
		{name: "raw pcm verbose", file: Synthesize("this is a much longer utterance for the test", "alloy", 1), filename: "c.pcm",
			format: openai.AudioResponseFormatVerboseJSON, want: "banter, what's up?", wantDur: SpeechDuration("this is a much longer utterance for the test", 1)},
		{name: "default between rules", file: EncodeWAV(make([]byte, 2*SpeechRate*3/2), SpeechRate), filename: "d.wav",
			want: "Simulated transcript of 1.5 seconds of audio.", wantDur: 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := serve(t, WithRules(rules...))
			c := newClient(s)
			res, err := c.Audio.Transcriptions.New(context.Background(), openai.AudioTranscriptionNewParams{
				File:           openai.File(bytes.NewReader(tt.file), tt.filename, "audio/wav"),
				Model:          openai.AudioModelGPT4oMiniTranscribe,
				Language:       openai.String("en"),
				Prompt:         openai.String("Discord voice chat"),
				ResponseFormat: tt.format,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.want {
				t.Errorf("text = %q, want %q", res.Text, tt.want)
			}
			if tt.format == openai.AudioResponseFormatVerboseJSON {
				v := res.AsTranscriptionVerbose()
				if math.Abs(v.Duration-tt.wantDur.Seconds()) > 0.01 || v.Language != "english" || len(v.Segments) != 1 {
					t.Errorf("verbose = %s", res.RawJSON())
				}
			}
			r := s.Requests()[0]
			if r.AudioDuration != tt.wantDur || r.Language != "en" || r.TranscriptionPrompt != "Discord voice chat" ||
				r.Model != "gpt-4o-mini-transcribe" || r.LastUserText != tt.want {
				t.Errorf("recorded %+v", r)
			}
		})
	}
}

func TestTranscriptionQueueTextFormatAndStream(t *testing.T) {
	s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointTranscriptions}, Reply: Reply{Transcript: "from rule"}}))
	s.QueueTranscripts("first queued", "second queued")
	c := newClient(s)
	wav := EncodeWAV(Synthesize("hello", "alloy", 1), SpeechRate)
	ctx := context.Background()

	// text format: openai-go reads it with a *string destination via Post.
	var text string
	body := openai.AudioTranscriptionNewParams{File: openai.File(bytes.NewReader(wav), "x.wav", "audio/wav"), Model: "gpt-4o-transcribe", ResponseFormat: openai.AudioResponseFormatText}
	if err := c.Post(ctx, "audio/transcriptions", body, &text, option.WithHeader("Accept", "text/plain")); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(text) != "first queued" {
		t.Errorf("text = %q", text)
	}

	st := c.Audio.Transcriptions.NewStreaming(ctx, openai.AudioTranscriptionNewParams{File: openai.File(bytes.NewReader(wav), "x.wav", "audio/wav"), Model: "gpt-4o-transcribe"})
	var deltas, done string
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "transcript.text.delta":
			deltas += ev.Delta
		case "transcript.text.done":
			done = ev.Text
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if deltas != "second queued" || done != "second queued" {
		t.Errorf("stream deltas %q done %q", deltas, done)
	}

	// A transcript queued and never taken is dropped by ClearTranscripts: the next request
	// gets the rule again.
	s.QueueTranscripts("never taken")
	if got := s.ClearTranscripts(); len(got) != 1 || got[0] != "never taken" {
		t.Errorf("ClearTranscripts = %q", got)
	}
	res, err := c.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{File: openai.File(bytes.NewReader(wav), "x.wav", "audio/wav"), Model: "whisper-1"})
	if err != nil || res.Text != "from rule" {
		t.Errorf("after queue: %v %+v", err, res)
	}
}

func TestTranscriptionBadUploads(t *testing.T) {
	s := serve(t)
	c := newClient(s)
	tests := []struct {
		name, filename string
		file           []byte
		code           string
	}{
		{name: "too short", filename: "a.wav", file: EncodeWAV(make([]byte, 200), SpeechRate), code: "audio_too_short"},
		{name: "corrupt wav", filename: "a.wav", file: []byte("RIFF\x00\x00\x00\x00WAVEjunk"), code: "invalid_value"},
		{name: "mp3 not simulated", filename: "a.mp3", file: []byte("ID3\x03\x00\x00\x00"), code: "invalid_value"},
		{name: "odd pcm", filename: "a.pcm", file: make([]byte, 4801), code: "invalid_value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Audio.Transcriptions.New(context.Background(), openai.AudioTranscriptionNewParams{
				File: openai.File(bytes.NewReader(tt.file), tt.filename, "application/octet-stream"), Model: "whisper-1"})
			var apiErr *openai.Error
			if !asOpenAIError(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != tt.code || apiErr.Param != "file" {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestSpeech(t *testing.T) {
	const text = "Hello there, this is banter speaking. How are you today?"
	for _, format := range []openai.AudioSpeechNewParamsResponseFormat{openai.AudioSpeechNewParamsResponseFormatPCM, openai.AudioSpeechNewParamsResponseFormatWAV} {
		t.Run(string(format), func(t *testing.T) {
			lat := Latency{TTSFirstByte: 30 * time.Millisecond, PerAudioChunk: time.Millisecond}
			s := serve(t, WithLatency(lat))
			c := newClient(s)
			start := time.Now()
			res, err := c.Audio.Speech.New(context.Background(), openai.AudioSpeechNewParams{
				Model: openai.SpeechModelGPT4oMiniTTS, Input: text,
				Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")},
				ResponseFormat: format,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.ContentLength != -1 || len(res.TransferEncoding) == 0 || res.TransferEncoding[0] != "chunked" {
				t.Errorf("not chunked: length %d, encoding %v", res.ContentLength, res.TransferEncoding)
			}
			first := make([]byte, 1)
			if _, err := io.ReadFull(res.Body, first); err != nil {
				t.Fatal(err)
			}
			if ttfb := time.Since(start); ttfb < lat.TTSFirstByte {
				t.Errorf("first byte after %v < injected %v", ttfb, lat.TTSFirstByte)
			}
			rest, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			audio := append(first, rest...)
			if format == openai.AudioSpeechNewParamsResponseFormatWAV {
				w, err := parseWAV(audio)
				if err != nil || w.SampleRate != SpeechRate || w.Channels != 1 || w.BitsPerSample != 16 {
					t.Fatalf("wav %+v %v", w, err)
				}
				audio = audio[w.DataOffset:]
			}
			want := SpeechDuration(text, 1)
			if got := pcmDuration(len(audio), SpeechRate); got != want {
				t.Errorf("duration %v, want %v", got, want)
			}
			r := s.Requests()[0]
			if r.Voice != "alloy" || r.Format != string(format) || r.LastUserText != text || r.AudioDuration != want ||
				r.Injected.TTSFirstByte != lat.TTSFirstByte || r.Injected.AudioChunks == 0 {
				t.Errorf("recorded %+v", r)
			}
		})
	}
}

func TestSpeechSSE(t *testing.T) {
	s := serve(t)
	c := newClient(s)
	var got []byte
	var out *http.Response
	err := c.Post(context.Background(), "audio/speech", map[string]any{
		"model": "gpt-4o-mini-tts", "input": "short", "voice": map[string]string{"id": "voice_custom"},
		"response_format": "pcm", "stream_format": "sse",
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	b, _ := io.ReadAll(out.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(rest, "speech.audio.delta") {
			got = append(got, []byte(rest)...)
		}
	}
	if !strings.Contains(string(b), `"type":"speech.audio.done"`) || len(got) == 0 {
		t.Errorf("sse body = %.300s", b)
	}
	if r := s.Requests()[0]; r.Voice != "voice_custom" || !r.Stream {
		t.Errorf("recorded %+v", r)
	}
}

// TestSynthesizeSpeechLike checks the properties VAD and Opus paths rely on:
// length proportional to text, pauses between words, syllable-rate energy
// modulation, and a gliding (not constant) pitch.
func TestSynthesizeSpeechLike(t *testing.T) {
	pcm := Synthesize("hello there how are you doing today my friend", "alloy", 1)
	samples := make([]float64, len(pcm)/2)
	for i := range samples {
		samples[i] = float64(int16(binary.LittleEndian.Uint16(pcm[2*i:]))) / 32768
	}
	const frame = SpeechRate / 50 // 20 ms
	var rms []float64
	var zc []int
	for i := 0; i+frame <= len(samples); i += frame {
		var e float64
		z := 0
		for j := i; j < i+frame; j++ {
			e += samples[j] * samples[j]
			if j > i && (samples[j] >= 0) != (samples[j-1] >= 0) {
				z++
			}
		}
		rms = append(rms, math.Sqrt(e/frame))
		zc = append(zc, z)
	}
	var loud, quiet, peak int
	var maxRMS float64
	for _, r := range rms {
		maxRMS = max(maxRMS, r)
		switch {
		case r > 0.03:
			loud++
		case r < 0.003:
			quiet++
		}
	}
	for _, v := range samples {
		if math.Abs(v) > 0.999 {
			peak++
		}
	}
	if loud < len(rms)/2 || quiet < 4 || maxRMS > 0.5 || peak > len(samples)/1000 {
		t.Errorf("frames %d: loud %d quiet %d maxRMS %.3f clipped %d", len(rms), loud, quiet, maxRMS, peak)
	}
	// energy modulation: one energy peak per syllable (12 spoken in the
	// text), not a flat tone; counted on the frames' level smoothed over 60 ms,
	// as a 20 ms frame's energy also moves with how many glottal pulses fall in it
	var peaks int
	smooth := make([]float64, len(rms))
	for i := range rms {
		lo, hi := max(0, i-1), min(len(rms), i+2)
		for _, r := range rms[lo:hi] {
			smooth[i] += r / float64(hi-lo)
		}
	}
	for i := 1; i+1 < len(smooth); i++ {
		if smooth[i] > smooth[i-1] && smooth[i] >= smooth[i+1] && smooth[i] > 0.05 {
			peaks++
		}
	}
	if peaks < 10 || peaks > 18 {
		t.Errorf("%d syllable peaks, want about 12", peaks)
	}
	// pitch glide: zero-crossing counts of voiced frames are not all equal
	minZ, maxZ := math.MaxInt, 0
	for i, z := range zc {
		if rms[i] > 0.03 {
			minZ, maxZ = min(minZ, z), max(maxZ, z)
		}
	}
	if maxZ-minZ < 3 {
		t.Errorf("zero crossings %d..%d: no pitch movement", minZ, maxZ)
	}
	if a, b := Synthesize("same", "alloy", 1), Synthesize("same", "alloy", 1); !bytes.Equal(a, b) {
		t.Error("not deterministic")
	}
	if a, b := Synthesize("same", "alloy", 1), Synthesize("same", "onyx", 1); bytes.Equal(a, b) {
		t.Error("voices sound identical")
	}
	if d1, d2 := SpeechDuration("abcdefghij", 1), SpeechDuration("abcdefghijabcdefghij", 1); d2 != 2*d1 {
		t.Errorf("not proportional: %v %v", d1, d2)
	}
}

func TestTranscriptionFormats(t *testing.T) {
	wav := EncodeWAV(Synthesize("hello there", "alloy", 1), SpeechRate) // 0.715 s
	tests := []struct {
		format, granularity string
		status              int
		contentType         string
		want                []string
	}{
		{format: "json", status: 200, contentType: "application/json", want: []string{`"text":"one two three"`, `"type":"duration"`, `"seconds":1`}},
		{format: "text", status: 200, contentType: "text/plain", want: []string{"one two three\n"}},
		{format: "srt", status: 200, contentType: "text/plain", want: []string{"1\n00:00:00,000 --> 00:00:00,715\none two three"}},
		{format: "vtt", status: 200, contentType: "text/plain", want: []string{"WEBVTT\n\n00:00:00.000 --> 00:00:00.715\none two three"}},
		{format: "verbose_json", granularity: "word", status: 200, contentType: "application/json",
			want: []string{`"task":"transcribe"`, `"duration":0.715`, `"words":[{"end":0.23`, `"word":"one"`}},
		{format: "xml", status: 400, contentType: "application/json", want: []string{`"param":"response_format"`}},
	}
	s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointTranscriptions}, Reply: Reply{Transcript: "one two three"}}))
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			fields := map[string]string{"model": "whisper-1", "response_format": tt.format}
			if tt.granularity != "" {
				fields["timestamp_granularities[]"] = tt.granularity
			}
			ct, body := multipartBody(t, fields, "a.wav", wav)
			res, err := http.Post(s.BaseURL()+"/audio/transcriptions", ct, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != tt.status || !strings.HasPrefix(res.Header.Get("Content-Type"), tt.contentType) {
				t.Errorf("status %d content-type %q", res.StatusCode, res.Header.Get("Content-Type"))
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("body %q lacks %q", b, w)
				}
			}
		})
	}
}

func TestTranscriptionTooLarge(t *testing.T) {
	s := serve(t, WithMaxUpload(1000))
	ct, body := multipartBody(t, map[string]string{"model": "whisper-1"}, "a.pcm", make([]byte, 2000))
	res, err := http.Post(s.BaseURL()+"/audio/transcriptions", ct, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d", res.StatusCode)
	}
	if r := s.Requests(); len(r) != 1 || r[0].Status != 413 {
		t.Errorf("recorded %+v", r)
	}
}

func TestScriptedAudio(t *testing.T) {
	custom := make([]byte, 4801) // 100 ms + an odd byte
	for i := range custom {
		custom[i] = byte(i)
	}
	s := serve(t, WithRules(Rule{Reply: Reply{Audio: custom, Text: "scripted"}}))
	c := newClient(s)
	res, err := c.Audio.Speech.New(context.Background(), openai.AudioSpeechNewParams{Model: "tts-1", Input: "ignored text",
		Voice: openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")}, ResponseFormat: "pcm"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || !bytes.Equal(b, custom[:4800]) {
		t.Errorf("speech body %d bytes, %v", len(b), err)
	}
	rc := dialRT(t, s, "gpt-realtime")
	rc.send(map[string]any{"type": "response.create"})
	tr, audio := collect(t, rc.until("response.done"))
	if tr != "scripted" || !bytes.Equal(audio, custom[:4800]) {
		t.Errorf("realtime: transcript %q, %d audio bytes", tr, len(audio))
	}
}
