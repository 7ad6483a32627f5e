package llm

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
)

// TranscribeOptions are optional hints for Transcribe.
type TranscribeOptions struct {
	// Language is an ISO-639-1 hint such as "en"; empty lets the model detect.
	Language string
	// Prompt biases recognition (names, vocabulary such as the bot's name).
	Prompt string
	// Stream asks for the transcript as server-sent deltas (stream: true) when the model
	// offers them (StreamsTranscripts); other models are asked without. Transcribe still
	// returns the whole transcript (transcript.text.done).
	Stream bool
	// OnDelta, with Stream, receives each transcript.text.delta as it arrives (on the
	// calling goroutine). A failure before the first delta is retried; after it, it is not.
	OnDelta func(delta string)
}

// StreamsTranscripts reports whether the transcription endpoint streams transcripts of
// model: the gpt-4o-transcribe family (snapshots and mini included) and gpt-transcribe do;
// whisper-1 does not ("Streaming is not supported for the whisper-1 model").
func StreamsTranscripts(model string) bool {
	m := strings.ToLower(model)
	return strings.Contains(m, "transcribe") && !strings.Contains(m, "whisper")
}

// Transcript is the result of Transcribe.
type Transcript struct {
	Text string
	// Language is the detected language when the server reports it.
	Language string
	// Duration is the audio length: the server's figure when it reports one,
	// else computed from the WAV header.
	Duration time.Duration
	// Usage is what the server reported (tokens or seconds), else the audio's duration; Cost
	// its price in US dollars at the Meter's prices.
	Usage    Usage
	Cost     float64
	Latency  time.Duration
	Attempts int
}

// Transcribe sends a WAV file (as built in memory by the caller) to
// /v1/audio/transcriptions with response_format json. A buffer that is not a
// PCM WAV with audio data fails with ErrorKindBadRequest before any request.
func (c *Client) Transcribe(ctx context.Context, model string, wav []byte, opts TranscribeOptions) (Transcript, error) {
	info, err := ParseWAVHeader(wav)
	if err == nil && info.DataBytes == 0 {
		err = errors.New("no audio samples")
	}
	if err == nil && model == "" {
		err = errors.New("model is empty")
	}
	if err != nil {
		return Transcript{}, &APIError{Op: OpTranscribe, Model: model, Kind: ErrorKindBadRequest, Err: err}
	}
	if model, err = c.admit(ctx, OpTranscribe, model); err != nil {
		return Transcript{}, err
	}
	start := c.now()
	out := Transcript{Duration: info.Duration()}
	params := func() openai.AudioTranscriptionNewParams {
		p := openai.AudioTranscriptionNewParams{
			File:           openai.File(bytes.NewReader(wav), "audio.wav", "audio/wav"),
			Model:          model,
			ResponseFormat: openai.AudioResponseFormatJSON,
		}
		if opts.Language != "" {
			p.Language = param.NewOpt(opts.Language)
		}
		if opts.Prompt != "" {
			p.Prompt = param.NewOpt(opts.Prompt)
		}
		return p
	}
	if opts.Stream && StreamsTranscripts(model) {
		return c.transcribeStream(ctx, model, params, opts.OnDelta, out, start)
	}
	attempts, err := c.call(ctx, OpTranscribe, model, c.opts.Timeout, func(ctx context.Context, a *attempt) error {
		res, err := c.audio.Transcriptions.New(ctx, params(), a.options()...)
		if err != nil {
			return err
		}
		if !res.JSON.Text.Valid() {
			return fmt.Errorf("transcription: %w (no text field)", errEmpty)
		}
		out.Text = strings.TrimSpace(res.Text)
		out.Language = res.Language
		if res.Duration > 0 {
			out.Duration = time.Duration(res.Duration * float64(time.Second))
		}
		out.Usage = transcriptionUsage(res.Usage, out.Duration)
		return nil
	})
	out.Latency = c.now().Sub(start)
	c.metrics.observeCall(OpTranscribe, model, err, out.Latency)
	if err != nil {
		return Transcript{}, err
	}
	out.Attempts = attempts
	out.Cost = c.opts.Meter.Record(ctx, AccountFrom(ctx), model, out.Usage)
	return out, nil
}

// WAVInfo describes a PCM WAV file.
type WAVInfo struct {
	Format        uint16 // 1 = integer PCM, 3 = float
	Channels      int
	SampleRate    int
	BitsPerSample int
	ByteRate      int
	DataBytes     int
}

// Duration returns the length of the audio data.
func (w WAVInfo) Duration() time.Duration {
	if w.ByteRate <= 0 {
		return 0
	}
	return time.Duration(int64(w.DataBytes) * int64(time.Second) / int64(w.ByteRate))
}

var errNotWAV = errors.New("not a RIFF/WAVE file")

// ParseWAVHeader reads the fmt and data chunks of a RIFF WAVE file
// (Microsoft RIFF, "WAVE" form; chunk = 4-byte id, uint32 LE size, body
// padded to even length):
//
//	"RIFF" size "WAVE" { "fmt " 16+ [format u16, channels u16, rate u32,
//	byterate u32, blockalign u16, bits u16] | "data" n [samples] | other }
//
// A data chunk that claims more bytes than are present (streaming writers
// put 0xFFFFFFFF there) is taken as running to the end of the buffer.
func ParseWAVHeader(b []byte) (WAVInfo, error) {
	var w WAVInfo
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return w, errNotWAV
	}
	var haveFmt bool
	for off := 12; off+8 <= len(b); {
		id := string(b[off : off+4])
		size := int64(binary.LittleEndian.Uint32(b[off+4 : off+8]))
		body := int64(off + 8)
		switch id {
		case "fmt ":
			if size < 16 || body+16 > int64(len(b)) {
				return w, fmt.Errorf("wav: fmt chunk of %d bytes", size)
			}
			f := b[body:]
			w.Format = binary.LittleEndian.Uint16(f[0:2])
			w.Channels = int(binary.LittleEndian.Uint16(f[2:4]))
			w.SampleRate = int(binary.LittleEndian.Uint32(f[4:8]))
			w.ByteRate = int(binary.LittleEndian.Uint32(f[8:12]))
			w.BitsPerSample = int(binary.LittleEndian.Uint16(f[14:16]))
			if w.Channels == 0 || w.SampleRate == 0 || w.ByteRate == 0 || w.BitsPerSample == 0 {
				return w, fmt.Errorf("wav: fmt %d ch, %d Hz, %d B/s, %d bit", w.Channels, w.SampleRate, w.ByteRate, w.BitsPerSample)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return w, errors.New("wav: data chunk before fmt chunk")
			}
			if rest := int64(len(b)) - body; size > rest {
				size = rest
			}
			w.DataBytes = int(size)
			return w, nil
		}
		next := body + size + size&1
		if next > int64(len(b)) {
			break
		}
		off = int(next)
	}
	if !haveFmt {
		return w, errors.New("wav: no fmt chunk")
	}
	return w, errors.New("wav: no data chunk")
}
