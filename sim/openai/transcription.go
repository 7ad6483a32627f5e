package openaisim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"time"
)

// transcriptionForm is a decoded POST /v1/audio/transcriptions upload.
// https://platform.openai.com/docs/api-reference/audio/createTranscription
type transcriptionForm struct {
	Model          string
	Language       string
	Prompt         string
	ResponseFormat string
	Stream         bool
	Granularities  []string
	Filename       string
	File           []byte
	Duration       time.Duration
}

var errTooLarge = errors.New("upload too large")

// parseTranscriptionForm reads a multipart body (untrusted) and measures the
// audio: WAV files by their header, raw .pcm/.raw uploads as s16le mono
// 24 kHz.
func parseTranscriptionForm(contentType string, body io.Reader, limit int64) (*transcriptionForm, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, reqErr("", "Invalid Content-Type header (%q), expected multipart/form-data with a boundary.", contentType)
	}
	mr := multipart.NewReader(io.LimitReader(body, limit+1<<20), params["boundary"])
	f := &transcriptionForm{}
	haveFile := false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, reqErr("", "Malformed multipart body: %v", err)
		}
		name := part.FormName()
		if name == "file" {
			f.Filename = part.FileName()
			b, err := io.ReadAll(io.LimitReader(part, limit+1))
			if err != nil {
				return nil, reqErr("file", "Malformed multipart body: %v", err)
			}
			if int64(len(b)) > limit {
				return nil, fmt.Errorf("%w: Maximum content size limit (%d) exceeded.", errTooLarge, limit)
			}
			f.File, haveFile = b, true
			continue
		}
		v, err := io.ReadAll(io.LimitReader(part, 64<<10))
		if err != nil {
			return nil, reqErr(name, "Malformed multipart body: %v", err)
		}
		val := string(v)
		switch name {
		case "model":
			f.Model = val
		case "language":
			f.Language = val
		case "prompt":
			f.Prompt = val
		case "response_format":
			f.ResponseFormat = val
		case "stream":
			f.Stream = val == "true"
		case "timestamp_granularities[]", "timestamp_granularities":
			f.Granularities = append(f.Granularities, val)
		}
	}
	if !haveFile {
		return nil, reqErr("file", "Missing required parameter: 'file'.")
	}
	if f.Model == "" {
		return nil, reqErr("model", "Missing required parameter: 'model'.")
	}
	switch f.ResponseFormat {
	case "":
		f.ResponseFormat = "json"
	case "json", "text", "verbose_json", "srt", "vtt":
	default:
		return nil, reqErr("response_format", "Invalid value: '%s'. Supported values are: 'json', 'text', 'srt', 'verbose_json', and 'vtt'.", f.ResponseFormat)
	}
	if f.Stream && f.Model == "whisper-1" {
		return nil, reqErr("stream", "Streaming is not supported for the whisper-1 model.")
	}
	d, err := audioDuration(f.Filename, f.File)
	if err != nil {
		return nil, &requestError{param: "file", msg: "Audio file might be corrupted or unsupported: " + err.Error()}
	}
	if d < 100*time.Millisecond {
		return nil, reqErr("file", "Audio file is too short. Minimum audio length is 0.1 seconds.")
	}
	f.Duration = d
	return f, nil
}

// wavSamples returns the samples of a WAV upload (nil for any other file).
func wavSamples(b []byte) []byte {
	w, err := parseWAV(b)
	if err != nil {
		return nil
	}
	return b[w.DataOffset : w.DataOffset+w.DataLen]
}

// audioDuration measures an uploaded file.
func audioDuration(filename string, b []byte) (time.Duration, error) {
	if len(b) >= 4 && string(b[:4]) == "RIFF" {
		w, err := parseWAV(b)
		if err != nil {
			return 0, err
		}
		return w.Duration(), nil
	}
	lower := strings.ToLower(filename)
	if strings.HasSuffix(lower, ".pcm") || strings.HasSuffix(lower, ".raw") {
		if len(b)%2 != 0 {
			return 0, errPCMOddSize
		}
		return pcmDuration(len(b), SpeechRate), nil
	}
	return 0, fmt.Errorf("openaisim decodes only WAV and raw .pcm (s16le 24 kHz mono) uploads, got %q", filename)
}

func (s *Server) handleTranscription(w http.ResponseWriter, r *http.Request) {
	rec := s.newRecord(r, EndpointTranscriptions)
	defer s.record(rec)
	f, err := parseTranscriptionForm(r.Header.Get("Content-Type"), r.Body, s.maxUpload)
	if err != nil {
		drain(r.Body)
		if errors.Is(err, errTooLarge) {
			rec.Status = http.StatusRequestEntityTooLarge
			s.record(rec)
			writeError(w, http.StatusRequestEntityTooLarge, APIError{Message: err.Error(), Type: "invalid_request_error"}, 0)
			return
		}
		rec.Status = http.StatusBadRequest
		s.record(rec)
		re, _ := asRequestError(err)
		e := APIError{Message: re.msg, Type: "invalid_request_error", Param: strp(re.param)}
		if re.param == "file" && strings.HasPrefix(re.msg, "Audio file is too short") {
			e.Code = strp("audio_too_short")
		} else if re.param == "file" && strings.HasPrefix(re.msg, "Audio file might be") {
			e.Code = strp("invalid_value")
		}
		writeError(w, http.StatusBadRequest, e, 0)
		return
	}
	rec.Model, rec.Language, rec.TranscriptionPrompt, rec.Format = f.Model, f.Language, f.Prompt, f.ResponseFormat
	rec.AudioDuration, rec.AudioBytes, rec.Stream = f.Duration, len(f.File), f.Stream
	rec.Prompt = f.Prompt
	o := s.resolve(&matchInput{endpoint: EndpointTranscriptions, model: f.Model, lastUser: f.Prompt, prompt: f.Prompt,
		audio: f.Duration, pcm: wavSamples(f.File), hasAudio: true, streaming: f.Stream})
	rec.Rule = o.rule
	if s.preFault(w, r, &o, rec) {
		return
	}
	text := transcriptFor(&o, f.Duration)
	rec.LastUserText = text
	ctx := r.Context()
	rec.Status = http.StatusOK
	secs := f.Duration.Seconds()
	if f.Stream {
		sw := s.newSSE(w, r, false, o.fault)
		toks := tokens(text)
		pc := s.newPacer(ctx, o.latency, &rec.Injected)
		for _, tok := range toks {
			if !pc.token() {
				rec.Status = 0
				return
			}
			sw.event("transcript.text.delta", map[string]any{"type": "transcript.text.delta", "delta": tok}, true)
		}
		usage, u := transcriptionTokens(secs, len(toks), f.Prompt)
		rec.Usage = u
		s.record(rec)
		sw.event("transcript.text.done", map[string]any{"type": "transcript.text.done", "text": text, "usage": usage}, false)
		return
	}
	if s.wait(ctx, o.latency.TimeToFirstToken, &rec.Injected.FirstToken) != nil {
		rec.Status = 0
		return
	}
	// Models billed by token report tokens; whisper-1, billed by the minute, reports seconds.
	var usage map[string]any
	if strings.Contains(f.Model, "whisper") {
		usage = map[string]any{"type": "duration", "seconds": int(math.Ceil(secs))}
		rec.Usage = Usage{Seconds: math.Ceil(secs)}
	} else {
		usage, rec.Usage = transcriptionTokens(secs, len(tokens(text)), f.Prompt)
	}
	s.record(rec)
	lang := o.reply.Language
	if lang == "" {
		lang = "english"
	}
	switch f.ResponseFormat {
	case "json":
		writeBody(w, map[string]any{"text": text, "usage": usage}, o.fault)
	case "verbose_json":
		v := map[string]any{
			"task": "transcribe", "language": lang, "duration": secs, "text": text,
			"segments": []any{map[string]any{
				"id": 0, "seek": 0, "start": 0.0, "end": secs, "text": " " + text, "tokens": []int{},
				"temperature": 0.0, "avg_logprob": -0.25, "compression_ratio": 1.2, "no_speech_prob": 0.01,
			}},
			"usage": usage,
		}
		if contains(f.Granularities, "word") {
			v["words"] = wordTimings(text, secs)
		}
		writeBody(w, v, o.fault)
	case "text":
		writePlain(w, text+"\n", o.fault)
	case "srt":
		writePlain(w, fmt.Sprintf("1\n00:00:00,000 --> %s\n%s\n\n", srtTime(secs, ","), text), o.fault)
	case "vtt":
		writePlain(w, fmt.Sprintf("WEBVTT\n\n00:00:00.000 --> %s\n%s\n\n", srtTime(secs, "."), text), o.fault)
	}
}

// transcriptFor picks the transcript: the rule's Transcript, else its Text,
// else a default that names the audio length.
func transcriptFor(o *outcome, d time.Duration) string {
	switch {
	case o.reply.NoSpeech:
		return ""
	case o.reply.Transcript != "":
		return o.reply.Transcript
	case o.rule != "" && o.text() != "":
		return o.text()
	default:
		return fmt.Sprintf("Simulated transcript of %.1f seconds of audio.", d.Seconds())
	}
}

func wordTimings(text string, secs float64) []any {
	words := strings.Fields(text)
	out := make([]any, 0, len(words))
	for i, wd := range words {
		out = append(out, map[string]any{
			"word":  wd,
			"start": secs * float64(i) / float64(len(words)),
			"end":   secs * float64(i+1) / float64(len(words)),
		})
	}
	return out
}

func srtTime(secs float64, sep string) string {
	ms := int(secs * 1000)
	return fmt.Sprintf("%02d:%02d:%02d%s%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
}

func writePlain(w http.ResponseWriter, text string, f Fault) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	b := []byte(text)
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	if f.TruncateAfterEvents > 0 {
		_, _ = w.Write(b[:len(b)/2])
		panic(http.ErrAbortHandler)
	}
	_, _ = w.Write(b)
}

// transcriptionTokens is the token usage of a transcription of secs of audio with out output
// tokens: 10 audio tokens a second (rounded up), the prompt's text tokens, as the wire object
// and as Recorded keeps it.
func transcriptionTokens(secs float64, out int, prompt string) (map[string]any, Usage) {
	audio, text := int(math.Ceil(secs*10)), countTokens(prompt)
	in := audio + text
	return map[string]any{"type": "tokens", "input_tokens": in, "output_tokens": out, "total_tokens": in + out,
			"input_token_details": map[string]int{"text_tokens": text, "audio_tokens": audio}},
		Usage{InputTokens: in, AudioInputTokens: audio, OutputTokens: out}
}
